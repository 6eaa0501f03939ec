-- durable_mailbox(run_id): the oldest deliveries no wait has taken yet, oldest first, at most
-- 100 (docs/sql.md, "durable_mailbox").
--
-- What a claim carries so that a signal wait reached in this invocation can take its delivery
-- without parking the run. A payload over durable_inline_limit() is marked omitted: the wait
-- parks, and the claim that wakes it takes the delivery (durable_resolve_waits).

create or replace function durable_mailbox(p_run_id text) returns jsonb
language sql stable as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'seq', g.seq, 'name', g.name,
           'payload', case when coalesce(g.payload_bytes, 0) <= durable_inline_limit() then g.payload end,
           'omitted', coalesce(g.payload_bytes > durable_inline_limit(), false)) order by g.seq), '[]'::jsonb)
    from (select * from durable_signals
           where run_id = p_run_id and taken_by is null
           order by seq limit 100) g
$$;
