-- Document bodies are stored packed: one zstd frame with Tender's trained dictionary
-- (tender-store/src/body.rs) in the new `packed` column, and `body` (the JSON text) left NULL.
-- Rows already stored keep their JSON in `body` and are read from there: nothing is rewritten,
-- and both statements per table change only the catalogue (no table rewrite, no long lock).
ALTER TABLE payments ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE customers ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE refunds ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE events ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE payment_methods ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE webhook_endpoints ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE connectors ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE balance_transactions ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE payouts ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE disputes ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE products ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE prices ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE subscriptions ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE invoices ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
ALTER TABLE test_clocks ADD COLUMN packed BYTEA, ALTER COLUMN body DROP NOT NULL;
