-- The double-entry ledger (CONTRACT §9). A posting is immutable, balanced (checked by the
-- domain before it reaches the store), and unique per cause within a scope, so a retry or a
-- replayed webhook never posts twice. Balances are kept with every posting, in its transaction,
-- spread over 16 shards per (account, mode, ledger account, currency) chosen by the posting's
-- cause, so that concurrent postings of one merchant do not all queue on one row; a balance is
-- the sum of its shards.
CREATE TABLE ledger_postings (
    seq        BIGSERIAL PRIMARY KEY,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    cause      TEXT NOT NULL,
    created    BIGINT NOT NULL,
    UNIQUE (account_id, livemode, cause)
);
CREATE TABLE ledger_entries (
    posting_seq    BIGINT NOT NULL REFERENCES ledger_postings(seq),
    ledger_account TEXT NOT NULL,
    currency       TEXT NOT NULL,
    amount         BIGINT NOT NULL
);
CREATE INDEX ledger_entries_posting ON ledger_entries(posting_seq);
CREATE TABLE ledger_balances (
    account_id     TEXT NOT NULL,
    livemode       BOOLEAN NOT NULL,
    ledger_account TEXT NOT NULL,
    currency       TEXT NOT NULL,
    shard          SMALLINT NOT NULL,
    amount         BIGINT NOT NULL,
    PRIMARY KEY (account_id, livemode, ledger_account, currency, shard)
);
