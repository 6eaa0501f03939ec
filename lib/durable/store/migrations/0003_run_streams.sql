-- Run streams and AI steps (docs/sql.md, "Run streams").
--
-- A run has an append-only stream of chunks: (seq, step id, attempt, data). Only the run's owner
-- appends, under its fence, so a superseded owner appends nothing. `seq` counts per run from 1;
-- it is handed out by the append that locks the run row (`durable_runs.stream_seq`), so chunks
-- commit in seq order and a reader that has seen seq n never later finds a chunk below n.
-- A chunk is broken when its attempt did not complete: a later attempt of its step streamed, or
-- the step's row records that attempt (or a later one) as anything but that attempt completed
-- (failed, waiting for a retry, completed by another attempt). Readers are told, so they can drop it.
--
-- AI steps (`ctx.step.ai`) are recorded with kind 'ai'; they behave as 'run' steps in SQL.

alter table durable_runs add column stream_seq bigint not null default 0;

create table durable_stream_chunks (
  run_id text not null references durable_runs (id) on delete cascade,
  seq bigint not null,
  step_id text not null check (length(step_id) between 1 and 255),
  attempt integer not null,
  data jsonb not null,
  created_at timestamptz not null default durable_now(),
  primary key (run_id, seq)
);
create index durable_stream_chunks_step on durable_stream_chunks (run_id, step_id, attempt);

alter table durable_steps drop constraint durable_steps_kind_check;
alter table durable_steps add constraint durable_steps_kind_check
  check (kind in ('run', 'tx', 'value', 'sleep', 'signal', 'poll', 'ai'));

-- Appends chunks (a jsonb array, in order) for one attempt of one step, under the fence, in one
-- round trip. Answers the seq of the last chunk, or null when the fence moved on or the run is no
-- longer running (nothing was written; a fence.rejected event says so).
create function durable_append_stream(
  p_run_id text, p_fence bigint, p_step_id text, p_attempt integer, p_chunks jsonb
) returns bigint
language plpgsql as $$
declare
  v_count integer := jsonb_array_length(p_chunks);
  v_last bigint;
begin
  update durable_runs set stream_seq = stream_seq + v_count
   where id = p_run_id and fence = p_fence and status = 'running'
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

-- The chunks after `p_after`, in seq order, at most `p_limit`, each with whether it is broken,
-- and the run's status (null when there is no such run) so a reader knows when the stream ends.
create function durable_read_stream(p_run_id text, p_after bigint, p_limit integer) returns jsonb
language sql stable as $$
  select jsonb_build_object(
    'status', (select status from durable_runs where id = p_run_id),
    'chunks', coalesce((
      select jsonb_agg(jsonb_build_object(
               'seq', c.seq, 'step_id', c.step_id, 'attempt', c.attempt, 'data', c.data,
               'broken',
                 exists (select 1 from durable_stream_chunks l
                          where l.run_id = c.run_id and l.step_id = c.step_id and l.attempt > c.attempt)
                 or exists (select 1 from durable_steps s
                             where s.run_id = c.run_id and s.step_id = c.step_id and s.attempt >= c.attempt
                               and not (s.status = 'completed' and s.attempt = c.attempt)))
             order by c.seq)
        from (select * from durable_stream_chunks
               where run_id = p_run_id and seq > p_after
               order by seq limit p_limit) c), '[]'::jsonb))
$$;
