-- Approvals across runs (docs/sql.md, "Migration 0018: approval decisions"; docs/guide/approvals.md).
-- One table: each person's decision on a wait a workflow marks as an approval, one row per actor
-- and wait (the primary key makes a quorum count distinct actors). `actor` stays plain, like tags,
-- so a page can say who decided; `reason` is free text from a person and is stored sealed like an
-- error message (engine/payloads.ts). The decision that completes the wait also delivers the
-- signal the wait takes (durable_decide_approval); the rows stay with the run and go with it.
create table durable_approval_decisions (
  run_id text not null references durable_runs (id) on delete cascade,
  step_id text not null,
  actor text not null check (length(actor) between 1 and 255),
  approved boolean not null,
  reason jsonb,
  decided_at timestamptz not null default durable_now(),
  primary key (run_id, step_id, actor)
);
