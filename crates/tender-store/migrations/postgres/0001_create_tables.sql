-- Tender's first schema (PostgreSQL; numbered in lockstep with migrations/sqlite). Documents are JSON in `body`; the columns beside it are what lists
-- filter and order on. `seq` gives the strict creation order that keyset pagination walks.

CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL,
    name          TEXT,
    password_hash TEXT NOT NULL,
    created       BIGINT NOT NULL
);

CREATE UNIQUE INDEX accounts_email ON accounts (lower(email));

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    mode         TEXT NOT NULL,
    kind         TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,
    public_value TEXT,
    last4        TEXT NOT NULL,
    created      BIGINT NOT NULL,
    expires_at   BIGINT,
    revoked      BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX api_keys_account ON api_keys(account_id, mode);

CREATE TABLE dashboard_sessions (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    csrf_token TEXT NOT NULL,
    mode       TEXT NOT NULL,
    created    BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE TABLE payments (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    customer   TEXT,
    status     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX payments_scope ON payments(account_id, livemode, seq);
CREATE INDEX payments_customer ON payments(account_id, livemode, customer, seq);
CREATE INDEX payments_status ON payments(account_id, livemode, status, seq);

CREATE TABLE customers (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    email      TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX customers_scope ON customers(account_id, livemode, seq);
CREATE INDEX customers_email ON customers(account_id, livemode, email, seq);

CREATE TABLE refunds (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    payment    TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX refunds_scope ON refunds(account_id, livemode, seq);
CREATE INDEX refunds_payment ON refunds(account_id, livemode, payment, seq);

CREATE TABLE events (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    type       TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX events_scope ON events(account_id, livemode, seq);
CREATE INDEX events_type ON events(account_id, livemode, type, seq);

CREATE TABLE payment_methods (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    created    BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    customer   TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX payment_methods_scope ON payment_methods(account_id, livemode, seq);
CREATE INDEX payment_methods_customer ON payment_methods(account_id, livemode, customer, seq);

CREATE TABLE webhook_endpoints (
    seq            BIGSERIAL PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    account_id     TEXT NOT NULL,
    livemode       BOOLEAN NOT NULL,
    created        BIGINT NOT NULL,
    version        BIGINT NOT NULL,
    status         TEXT,
    enabled_events TEXT,
    body           TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints(account_id, livemode, seq);

-- Values encrypted under the vault key (webhook signing secrets, saved card numbers), kept
-- apart from the public documents, keyed by the id of the object they belong to.
CREATE TABLE sealed_values (
    owner_id   TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    livemode   BOOLEAN NOT NULL,
    sealed     TEXT NOT NULL
);

-- When each webhook endpoint started failing every delivery (NULL while healthy).
CREATE TABLE webhook_endpoint_health (
    endpoint_id   TEXT PRIMARY KEY,
    failing_since BIGINT
);

-- Background work (settlement, expiry), written with the change that schedules it and claimed by
-- lease, so it survives restarts and runs once across nodes.
CREATE TABLE scheduled_tasks (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    account_id  TEXT NOT NULL,
    livemode    BOOLEAN NOT NULL,
    object_id   TEXT NOT NULL,
    due_at      BIGINT NOT NULL,
    lease_until BIGINT
);
CREATE INDEX scheduled_tasks_due ON scheduled_tasks(due_at);

-- The outbox: one row per (event, endpoint), written with the event.
CREATE TABLE webhook_deliveries (
    seq             BIGSERIAL PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    account_id      TEXT NOT NULL,
    livemode        BOOLEAN NOT NULL,
    event_id        TEXT NOT NULL,
    endpoint_id     TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        JSONB NOT NULL DEFAULT '[]',
    next_attempt_at BIGINT,
    lease_until     BIGINT,
    created         BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries(event_id, endpoint_id);

CREATE TABLE idempotency_keys (
    account_id  TEXT NOT NULL,
    livemode    BOOLEAN NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    state       TEXT NOT NULL,
    status      BIGINT,
    body        BYTEA,
    created     BIGINT NOT NULL,
    locked_at   BIGINT NOT NULL,
    PRIMARY KEY (account_id, livemode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created);
