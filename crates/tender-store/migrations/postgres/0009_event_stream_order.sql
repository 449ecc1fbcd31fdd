-- The event stream (GET /v2/events/stream) must never skip an event (CONTRACT §17, T3-M7).
-- `seq` is handed out when a row is inserted, not when its transaction commits, so an event
-- with a lower seq can become visible after one with a higher seq that a stream already read.
-- Each event now records the transaction that wrote it; the stream reads in (txid, seq) order
-- and only events of transactions older than every transaction still running
-- (pg_snapshot_xmin), which are final: nothing can appear behind its position afterwards.
-- Existing rows get this migration's own transaction id: they are ordered among themselves by
-- seq, and all before any later event.
ALTER TABLE events ADD COLUMN txid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX events_stream ON events(account_id, livemode, txid, seq);
