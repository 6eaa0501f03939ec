-- durable_cancel_runs(ids, reason, children): cancelMany's batch (docs/sql.md, "Bulk actions").
--
-- Cancels each run of `ids`, in the order given, by durable_cancel_run's rules: it locks the run
-- (waiting for a claim or a receipt that holds it), finds it terminal and skips it, or cancels it
-- under a new fence (its owner's next write is refused), its non-terminal descendants first unless
-- `children` is 'keep'. A run a tick claimed meanwhile is cancelled under that claim's fence; one
-- that finished meanwhile is skipped. Answers how many of `ids` this call cancelled (descendants
-- cancelled with them are not counted).

create or replace function durable_cancel_runs(p_ids text[], p_reason text, p_children text) returns integer
language plpgsql as $$
declare
  v_id text;
  v_changed integer := 0;
begin
  foreach v_id in array coalesce(p_ids, '{}') loop
    if durable_cancel_run(v_id, p_reason, p_children) = 'cancelled' then
      v_changed := v_changed + 1;
    end if;
  end loop;
  return v_changed;
end
$$;
