-- Payment Links (CONTRACT §14): lasting addresses, each visit of which opens a fresh Checkout
-- Session. A document like the others, listed by whether it is active. (Numbered in lockstep
-- with migrations/sqlite/0016.)
CREATE TABLE payment_links (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    active     TEXT,
    body       TEXT,
    packed     BYTEA
);
CREATE INDEX payment_links_scope ON payment_links(account_id, livemode, seq);
CREATE INDEX payment_links_active ON payment_links(account_id, livemode, active, seq);
