-- durable_inline_limit(): how many bytes of JSON text a step result or signal payload may have
-- and still travel with a claim (64 KiB). Larger ones are read when their step is reached
-- (durable_ledger, durable_mailbox). IMMUTABLE: the planner folds it into the plans that use it.

create or replace function durable_inline_limit() returns integer
language sql immutable as $$ select 65536 $$;
