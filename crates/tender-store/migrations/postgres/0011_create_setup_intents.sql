-- SetupIntents (CONTRACT §13): saving a card for later without charging it. A document like
-- the others (its body packed, as 0007 made every table's), listed by customer. (Numbered in
-- lockstep with migrations/sqlite/0011.)
CREATE TABLE setup_intents (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    customer   TEXT,
    status     TEXT,
    body       TEXT,
    packed     BYTEA
);
CREATE INDEX setup_intents_scope ON setup_intents(account_id, livemode, seq);
CREATE INDEX setup_intents_customer ON setup_intents(account_id, livemode, customer, seq);
