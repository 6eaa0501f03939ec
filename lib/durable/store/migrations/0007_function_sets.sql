-- The SQL function set's revisions (docs/sql.md, "How the functions are applied").
--
-- From this migration on, the functions live one to a file in lib/durable/store/sql/functions/,
-- and migrate() applies the whole set, after the numbered migrations and under the same lock,
-- whenever the set's revision is newer than the newest one recorded here; then it records it.
-- One row per revision applied: a second application of one revision would fail on the key.
-- Numbered migrations from 0007 on hold only tables, columns, indexes and drops.

create table durable_function_sets (
  revision integer primary key check (revision > 0),
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  applied_at timestamptz not null default now()
);
