-- Payment Links (CONTRACT §14): lasting addresses, each visit of which opens a fresh Checkout
-- Session. A document like the others, listed by whether it is active. (Numbered in lockstep
-- with migrations/postgres/0016.)
CREATE TABLE payment_links (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    active     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX payment_links_scope ON payment_links(account_id, livemode, seq);
CREATE INDEX payment_links_active ON payment_links(account_id, livemode, active, seq);
