-- durable_release_unreadable(run_id, fence, key_id, wake_in_ms): give back a claimed run whose
-- stored payloads name an encryption key this deployment does not hold (docs/sql.md,
-- "durable_release_unreadable"; docs/guide/encryption.md, "A missing key").
--
-- Nothing of the run's own is written: no receipt, no error, lost_claims stays as it is (a clean
-- release, as durable_release_run's: the owner ran no step). The run is pending again and due
-- `wake_in_ms` later (at its deadline at the latest), so claimers that lack the key do not take it
-- back at once, and one that holds it finds it then. A 'decryption.failed' event names the key.
-- The fence and lease checks are durable_release_run's.

create or replace function durable_release_unreadable(
  p_run_id text, p_fence bigint, p_key_id text, p_wake_in_ms bigint
) returns boolean
language plpgsql as $$
declare
  v_now timestamptz := durable_now();
begin
  update durable_runs set
    status = 'pending', lease_until = null, waiting_for = null, updated_at = v_now,
    wake_at = least(v_now + greatest(p_wake_in_ms, 0) * interval '1 millisecond', deadline_at)
  where id = p_run_id and fence = p_fence and status is not distinct from 'running'
    and lease_until > v_now and (deadline_at is null or deadline_at > v_now);
  if not found then
    perform durable_note_rejection(p_run_id, p_fence, 'release');
    return false;
  end if;
  insert into durable_events (run_id, kind, fence, data)
  values (p_run_id, 'decryption.failed', p_fence, jsonb_build_object('keyId', p_key_id));
  return true;
end
$$;
