-- Recurring billing (CONTRACT §10): products, prices, subscriptions, invoices and test clocks
-- are documents like the others, with the columns their lists filter on. A customer may belong
-- to a test clock, and so may a scheduled task: a clock's task is due in that clock's time and
-- runs only when the clock is advanced, in time order.
CREATE TABLE products (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    active     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX products_scope ON products(account_id, livemode, seq);

CREATE TABLE prices (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    product    TEXT,
    active     TEXT,
    type       TEXT,
    currency   TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX prices_scope ON prices(account_id, livemode, seq);
CREATE INDEX prices_product ON prices(account_id, livemode, product, seq);

CREATE TABLE subscriptions (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    customer   TEXT,
    status     TEXT,
    prices     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX subscriptions_scope ON subscriptions(account_id, livemode, seq);
CREATE INDEX subscriptions_customer ON subscriptions(account_id, livemode, customer, seq);

CREATE TABLE invoices (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    customer   TEXT,
    subscription TEXT,
    status     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX invoices_scope ON invoices(account_id, livemode, seq);
CREATE INDEX invoices_customer ON invoices(account_id, livemode, customer, seq);
CREATE INDEX invoices_subscription ON invoices(account_id, livemode, subscription, seq);

CREATE TABLE test_clocks (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL
);
CREATE INDEX test_clocks_scope ON test_clocks(account_id, livemode, seq);

ALTER TABLE customers ADD COLUMN test_clock TEXT;
CREATE INDEX customers_test_clock ON customers(account_id, livemode, test_clock, seq);

ALTER TABLE scheduled_tasks ADD COLUMN clock TEXT;
CREATE INDEX scheduled_tasks_clock ON scheduled_tasks(clock, due_at);
