-- Checkout Sessions (CONTRACT §14): the hosted page where a shop's customer pays, subscribes
-- or saves a card. A document like the others (its body packed, as 0007 made every table's),
-- listed by customer, status, payment intent or subscription. (Numbered in lockstep with
-- migrations/sqlite/0015.)
CREATE TABLE checkout_sessions (
    seq          BIGSERIAL PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    account_id   TEXT NOT NULL,
    livemode     BOOLEAN NOT NULL,
    created      BIGINT NOT NULL,
    version      BIGINT NOT NULL,
    customer     TEXT,
    status       TEXT,
    payment      TEXT,
    subscription TEXT,
    body         TEXT,
    packed       BYTEA
);
CREATE INDEX checkout_sessions_scope ON checkout_sessions(account_id, livemode, seq);
CREATE INDEX checkout_sessions_customer ON checkout_sessions(account_id, livemode, customer, seq);
CREATE INDEX checkout_sessions_payment ON checkout_sessions(account_id, livemode, payment, seq);
CREATE INDEX checkout_sessions_subscription ON checkout_sessions(account_id, livemode, subscription, seq);
