-- The merchant's balance (CONTRACT §9): balance transactions, payouts and disputes are documents
-- like the others, with the columns their lists filter on; an account's prices (NULL: the
-- defaults) sit on the account.
CREATE TABLE balance_transactions (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    account_id   TEXT NOT NULL,
    livemode     INTEGER NOT NULL,
    created      INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    type         TEXT,
    source       TEXT,
    payout       TEXT,
    currency     TEXT,
    status       TEXT,
    available_on INTEGER,
    body         TEXT NOT NULL
);
CREATE INDEX balance_transactions_scope ON balance_transactions(account_id, livemode, seq);
CREATE INDEX balance_transactions_source ON balance_transactions(account_id, livemode, source, seq);
CREATE INDEX balance_transactions_payout ON balance_transactions(account_id, livemode, payout, seq);

CREATE TABLE payouts (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    status     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX payouts_scope ON payouts(account_id, livemode, seq);

CREATE TABLE disputes (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    payment    TEXT,
    status     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX disputes_scope ON disputes(account_id, livemode, seq);
CREATE INDEX disputes_payment ON disputes(account_id, livemode, payment, seq);

ALTER TABLE accounts ADD COLUMN pricing TEXT;
