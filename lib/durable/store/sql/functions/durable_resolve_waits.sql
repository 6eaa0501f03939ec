-- durable_resolve_waits(run_id, fence, now): answers the due waits of a run, as the claim that
-- wakes it (docs/sql.md, "durable_resolve_waits").
--
-- A sleep whose wake time passed completes with null. Signal waits and races (invoke,
-- waitForAny, waitForCallback) are walked in the order the body reached them (seq), so each takes
-- its delivery before a later wait can. A signal wait takes the oldest untaken delivery of its
-- name (signal_name, or its step id for waits written before migration 0002) that landed before
-- its deadline, marking it taken_by the wait, or completes with { timedOut: true } once its
-- deadline passed with no delivery there for it. A delivery that landed first always wins; one
-- that landed after the deadline does not answer the wait.
--
-- A race is decided by durable_race_winner in one conditional write of its row: the winning
-- branch and its value ({ branch, value }); a winning signal branch takes its delivery, a losing
-- one leaves it untaken for a later wait. An invoke completes with the child's { status, output,
-- error } when the child completed, fails with child_run_failed when it failed or was cancelled,
-- and fails with step_timeout when its timeout came first (the engine cancels the child). The rows
-- take the claim's fence. Retry waits (run and tx rows in 'waiting') and poll rows are left to the
-- engine, which reads their wake_at from the ledger.

create or replace function durable_resolve_waits(p_run_id text, p_fence bigint, p_now timestamptz)
returns void
language plpgsql as $$
declare
  v_wait durable_steps;
  v_signal durable_signals;
  v_win jsonb;
begin
  update durable_steps set status = 'completed', fence = p_fence, completed_at = p_now,
                           updated_at = p_now, result = 'null'::jsonb
   where run_id = p_run_id and kind = 'sleep' and status = 'waiting' and wake_at <= p_now;

  for v_wait in
    select * from durable_steps
     where run_id = p_run_id and kind in ('signal', 'invoke', 'any') and status = 'waiting'
     order by seq, step_id
  loop
    if v_wait.kind <> 'signal' then
      v_win := durable_race_winner(p_run_id, v_wait.branches, v_wait.deadline_at, p_now);
      if v_win is not null then
        perform durable_answer_race(v_wait, v_win, p_fence, p_now);
      end if;
      continue;
    end if;
    -- A delivery that landed after the wait's deadline does not answer it (the timeout won).
    select * into v_signal from durable_signals
     where run_id = p_run_id and name = coalesce(v_wait.signal_name, v_wait.step_id) and taken_by is null
       and (v_wait.deadline_at is null or created_at <= v_wait.deadline_at)
     order by seq limit 1;
    if found then
      update durable_signals set taken_by = v_wait.step_id where seq = v_signal.seq;
      update durable_steps set status = 'completed', fence = p_fence, completed_at = p_now,
                               updated_at = p_now,
                               result = jsonb_build_object('payload', v_signal.payload,
                                                           'signalSeq', v_signal.seq),
                               result_bytes = v_signal.payload_bytes
       where run_id = p_run_id and step_id = v_wait.step_id;
    elsif v_wait.deadline_at <= p_now then
      update durable_steps set status = 'completed', fence = p_fence, completed_at = p_now,
                               updated_at = p_now, result = jsonb_build_object('timedOut', true)
       where run_id = p_run_id and step_id = v_wait.step_id;
    end if;
  end loop;
end
$$;
