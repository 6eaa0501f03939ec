-- durable_read_stream(run_id, after, limit): the chunks after p_after, in seq order, at most
-- p_limit, and the run's status (null when there is no such run) so a reader knows when the
-- stream ends (docs/sql.md, "Run streams").
--
-- A chunk is broken when its attempt did not complete: a later attempt of its step streamed, or
-- the step's row records that attempt (or a later one) as anything but that attempt completed.
-- Readers are told, so they can drop it.

create or replace function durable_read_stream(p_run_id text, p_after bigint, p_limit integer) returns jsonb
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
