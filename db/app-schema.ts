import { type Kysely, sql } from "kysely";

/**
 * The app's own schema: the mock providers' state (what a real payment, email or export service
 * would keep on its side) and the demo shop's tables (stock, orders, outbox). Kept apart from the
 * toolkit's `durable_*` tables, whose migrations travel inside lib/durable/store: an app owns its
 * tables, the toolkit owns its own.
 *
 * Every statement is idempotent (`if not exists`, `on conflict do nothing`), and the whole script
 * runs under an advisory lock, so two cold starts that create them at once queue instead of
 * racing `create table` (whose catalog inserts collide).
 */
const SCHEMA_LOCK = 0x6d6f_636b; // "mock"

const SCRIPT = `
create table if not exists mock_provider_requests (
  id bigserial primary key,
  provider text not null,
  operation text not null,
  idempotency_key text,
  run_id text,
  outcome text not null,
  detail text,
  created_at timestamptz not null default now()
);
create index if not exists mock_provider_requests_key on mock_provider_requests (provider, operation, idempotency_key);

create table if not exists mock_payments (
  id text primary key,
  kind text not null check (kind in ('charge', 'refund')),
  idempotency_key text not null unique,
  run_id text,
  reference text not null,
  amount_cents integer not null,
  currency text not null,
  status text not null,
  created_at timestamptz not null default now(),
  settled_at timestamptz
);

create table if not exists mock_webhook_deliveries (
  id bigserial primary key,
  webhook_id text not null,
  run_id text not null,
  event text not null,
  outcome text not null,
  created_at timestamptz not null default now()
);

create table if not exists mock_email_messages (
  id text primary key,
  idempotency_key text not null unique,
  run_id text,
  recipient text not null,
  subject text not null,
  created_at timestamptz not null default now()
);

create table if not exists mock_operations (
  id text primary key,
  idempotency_key text not null unique,
  run_id text,
  kind text not null,
  duration_ms integer not null,
  submitted_at timestamptz not null default now()
);

create table if not exists demo_inventory (
  sku text primary key,
  name text not null,
  price_cents integer not null,
  on_hand integer not null check (on_hand >= 0),
  reserved integer not null default 0 check (reserved >= 0 and reserved <= on_hand)
);
insert into demo_inventory (sku, name, price_cents, on_hand) values
  ('mug', 'Enamel mug', 1200, 40),
  ('tee', 'Logo T-shirt', 2500, 25),
  ('poster', 'Risograph poster', 1800, 15)
on conflict (sku) do nothing;

create table if not exists demo_orders (
  id text primary key,
  run_id text not null,
  sku text not null references demo_inventory (sku),
  quantity integer not null,
  amount_cents integer not null,
  status text not null,
  charge_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The support chat's shop (app/workflows/support-chat.ts): a few orders to look up and refund,
-- and the refunds, one per order (its primary key), written by the refund tool's tx step.
insert into demo_orders (id, run_id, sku, quantity, amount_cents, status) values
  ('1042', 'seed', 'mug', 2, 2400, 'shipped'),
  ('1043', 'seed', 'tee', 1, 2500, 'delivered'),
  ('1044', 'seed', 'poster', 1, 1800, 'processing')
on conflict (id) do nothing;

create table if not exists demo_refunds (
  order_id text primary key references demo_orders (id),
  amount_cents integer not null,
  run_id text not null,
  tool_call_key text not null,
  created_at timestamptz not null default now()
);

create table if not exists demo_outbox (
  run_id text not null,
  message_key text not null,
  position integer not null default 0,
  recipient text not null,
  subject text not null,
  status text not null default 'queued',
  provider_message_id text,
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  primary key (run_id, message_key)
);
alter table demo_outbox add column if not exists position integer not null default 0;
`;

/** Creates the app's tables if they are missing (idempotent, safe when cold starts race). */
export async function ensureAppSchema(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql.raw(`select pg_advisory_xact_lock(${SCHEMA_LOCK})`).execute(trx);
    await sql.raw(SCRIPT).execute(trx);
  });
}
