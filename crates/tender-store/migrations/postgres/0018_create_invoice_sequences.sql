-- Invoice numbers (CONTRACT §16): one document per account and mode holding the prefix and the
-- next number of its gap-free sequence, updated in the batch that finalizes an invoice.
-- (Numbered in lockstep with migrations/sqlite/0018.)
CREATE TABLE invoice_sequences (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    body       TEXT,
    packed     BYTEA
);
CREATE INDEX invoice_sequences_scope ON invoice_sequences(account_id, livemode, seq);
