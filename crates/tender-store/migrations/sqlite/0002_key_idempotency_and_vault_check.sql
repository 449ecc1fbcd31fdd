-- Idempotency records written before this migration hold a plain SHA-256 of the whole request
-- body (card number and CVC included) and unsealed response bodies. Both are removed: a retry of
-- such a key within its 24 hours gets 400 idempotency_error, never a second execution.
UPDATE idempotency_keys SET fingerprint = 'removed', body = NULL;

-- Store-wide settings; `vault_check` proves which vault key this database was written with.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Deliveries under a live lease, counted by the fair claim's per-account and per-endpoint caps,
-- and each account and mode's due deliveries, oldest first, for the fair claim's candidates.
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries(lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX webhook_deliveries_scope_due ON webhook_deliveries(account_id, livemode, status, next_attempt_at);

-- The e-mail customers see on receipts (the login e-mail is never shown to them).
ALTER TABLE accounts ADD COLUMN public_email TEXT;

-- The customers' e-mail filter ignores case: the indexed copy is lower-cased (the document keeps
-- the address as given).
UPDATE customers SET email = lower(email) WHERE email IS NOT NULL;
