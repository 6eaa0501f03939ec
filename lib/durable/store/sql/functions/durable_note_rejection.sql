-- durable_note_rejection(run_id, fence, write): a stale owner's write matched no row; note it as
-- a fence.rejected event naming the refused write ('finish', 'release', 'suspend', 'stream'). The
-- owner itself is told by the write's answer and stops quietly.

create or replace function durable_note_rejection(p_run_id text, p_fence bigint, p_write text) returns void
language sql as $$
  insert into durable_events (run_id, kind, fence, data)
  values (p_run_id, 'fence.rejected', p_fence, jsonb_build_object('write', p_write))
$$;
