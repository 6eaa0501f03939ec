-- Chats: which run is a chat's active turn (docs/sql.md, "Migration 0009"; docs/guide/chat.md).
-- A chat turn is an ordinary run of the app's chat workflow; this row only lets
-- `GET /api/chat/{chatId}/stream` and `loadChat` find the turn of a chat id without the client
-- knowing the run id. The last turn started wins. Retention that deletes the run deletes the row
-- with it (on delete cascade): the chat then has no active turn, which the routes answer as 204.
create table durable_chats (
  chat_id text primary key check (length(chat_id) between 1 and 255),
  run_id text not null references durable_runs (id) on delete cascade,
  updated_at timestamptz not null default durable_now()
);
create index durable_chats_run on durable_chats (run_id);
