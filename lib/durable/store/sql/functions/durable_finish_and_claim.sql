-- durable_finish_and_claim(...): end a run as durable_finish_run does and, only when it ended,
-- claim the next due run as durable_claim_run does (no run id), in the same round trip and
-- transaction (docs/sql.md, "durable_finish_and_claim"; docs/decisions.md, "Chained claims").
--
-- A loop that goes on claiming after a completion (a tick's, a worker's) saves one round trip per
-- run. Answers { finished, next }: next is the claim's answer (null: nothing due; { more: true }
-- with p_more: the claim stopped at a bound, claim again), absent when the run did not end
-- ('lost', 'conflict'), so a loop never holds a claim it did not ask for.

create or replace function durable_finish_and_claim(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb, p_workflows jsonb, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb,
  p_rates jsonb, p_more boolean
) returns jsonb
language plpgsql as $$
declare
  -- One read of the clock for the end and the claim (function set 25): the same transaction, a
  -- few microseconds apart, and a lease taken from the earlier time only ends that much sooner.
  v_now timestamptz := durable_now();
  v_finished text := durable_finish_run(p_run_id, p_fence, p_status, p_output, p_error, p_warnings, p_step, v_now);
begin
  if v_finished <> 'finished' then
    return jsonb_build_object('finished', v_finished);
  end if;
  return jsonb_build_object('finished', v_finished, 'next',
    durable_claim_run(p_workflows, null, p_lease_ms, p_exclude, p_limits, p_versions, p_rates, p_more, true, v_now));
end
$$;

-- The thirteen-argument form (0010, 0011): a claim that stopped at a bound answers null, as those
-- releases read it, for their instances during a deploy.
create or replace function durable_finish_and_claim(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb, p_workflows jsonb, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb,
  p_rates jsonb
) returns jsonb
language sql as $$
  select durable_finish_and_claim(p_run_id, p_fence, p_status, p_output, p_error, p_warnings, p_step,
                                  p_workflows, p_lease_ms, p_exclude, p_limits, p_versions, p_rates, false)
$$;

-- The twelve-argument form (0006 to 0009, without rate limits), for instances of those releases
-- during a deploy.
create or replace function durable_finish_and_claim(
  p_run_id text, p_fence bigint, p_status text, p_output jsonb, p_error jsonb, p_warnings jsonb,
  p_step jsonb, p_workflows jsonb, p_lease_ms bigint, p_exclude jsonb, p_limits jsonb, p_versions jsonb
) returns jsonb
language sql as $$
  select durable_finish_and_claim(p_run_id, p_fence, p_status, p_output, p_error, p_warnings, p_step,
                                  p_workflows, p_lease_ms, p_exclude, p_limits, p_versions, null::jsonb)
$$;
