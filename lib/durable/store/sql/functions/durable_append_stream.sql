-- durable_append_stream(run_id, fence, step_id, attempt, chunks): append chunks (a jsonb array,
-- in order) for one attempt of one step, under the fence, in one round trip (docs/sql.md,
-- "Run streams").
--
-- Only the run's owner appends. seq counts per run from 1 and is handed out by the update that
-- locks the run row (durable_runs.stream_seq), so chunks commit in seq order and a reader that has
-- seen seq n never later finds a chunk below n. Answers the seq of the last chunk, or null when
-- the fence moved on, the run is no longer running, its lease ended (docs/rules.md, rule 11a) or it
-- is past its deadline (nothing written; a fence.rejected event).

create or replace function durable_append_stream(
  p_run_id text, p_fence bigint, p_step_id text, p_attempt integer, p_chunks jsonb
) returns bigint
language plpgsql as $$
declare
  v_count integer := jsonb_array_length(p_chunks);
  v_last bigint;
begin
  update durable_runs set stream_seq = stream_seq + v_count
   where id = p_run_id and fence = p_fence and status is not distinct from 'running'
     and lease_until > durable_now() and (deadline_at is null or deadline_at > durable_now())
   returning stream_seq into v_last;
  if v_last is null then
    perform durable_note_rejection(p_run_id, p_fence, 'stream');
    return null;
  end if;
  insert into durable_stream_chunks (run_id, seq, step_id, attempt, data)
  select p_run_id, v_last - v_count + c.n, p_step_id, p_attempt, c.data
    from jsonb_array_elements(p_chunks) with ordinality as c (data, n);
  return v_last;
end
$$;
