-- SetupIntents (CONTRACT §13): saving a card for later without charging it. A document like
-- the others, listed by customer. (Numbered in lockstep with migrations/postgres/0011.)
CREATE TABLE setup_intents (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    customer   TEXT,
    status     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX setup_intents_scope ON setup_intents(account_id, livemode, seq);
CREATE INDEX setup_intents_customer ON setup_intents(account_id, livemode, customer, seq);
