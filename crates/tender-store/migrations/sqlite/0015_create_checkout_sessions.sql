-- Checkout Sessions (CONTRACT §14): the hosted page where a shop's customer pays, subscribes
-- or saves a card. A document like the others, listed by customer, status, payment intent or
-- subscription. (Numbered in lockstep with migrations/postgres/0015.)
CREATE TABLE checkout_sessions (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    account_id   TEXT NOT NULL,
    livemode     INTEGER NOT NULL,
    created      INTEGER NOT NULL,
    version      INTEGER NOT NULL,
    customer     TEXT,
    status       TEXT,
    payment      TEXT,
    subscription TEXT,
    body         TEXT NOT NULL
);
CREATE INDEX checkout_sessions_scope ON checkout_sessions(account_id, livemode, seq);
CREATE INDEX checkout_sessions_customer ON checkout_sessions(account_id, livemode, customer, seq);
CREATE INDEX checkout_sessions_payment ON checkout_sessions(account_id, livemode, payment, seq);
CREATE INDEX checkout_sessions_subscription ON checkout_sessions(account_id, livemode, subscription, seq);
