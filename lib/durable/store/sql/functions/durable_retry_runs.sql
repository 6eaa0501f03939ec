-- durable_retry_runs(ids): retryMany's batch (docs/sql.md, "Bulk actions").
--
-- Retries each run of `ids`, in the order given, by durable_retry_run's rules: it locks the run,
-- and reopens it only while it is failed and not compacted (completed receipts and external keys
-- stay, failed steps become due retries, a new fence). A failed singleton run whose key another
-- run holds now fails on durable_runs_singleton: that run alone is skipped (its retry rolls back
-- to a savepoint), so one held key does not undo the batch. Answers how many this call retried.

create or replace function durable_retry_runs(p_ids text[]) returns integer
language plpgsql as $$
declare
  v_id text;
  v_changed integer := 0;
begin
  foreach v_id in array coalesce(p_ids, '{}') loop
    begin
      if durable_retry_run(v_id) = 'retried' then
        v_changed := v_changed + 1;
      end if;
    exception when unique_violation then
      null;
    end;
  end loop;
  return v_changed;
end
$$;
