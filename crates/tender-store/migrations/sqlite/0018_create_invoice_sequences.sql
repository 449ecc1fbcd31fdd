-- Invoice numbers (CONTRACT §16): one document per account and mode holding the prefix and the
-- next number of its gap-free sequence, updated in the batch that finalizes an invoice.
-- (Numbered in lockstep with migrations/postgres/0018.)
CREATE TABLE invoice_sequences (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL
);
CREATE INDEX invoice_sequences_scope ON invoice_sequences(account_id, livemode, seq);
