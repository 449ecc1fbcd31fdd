-- Connectors (CONTRACT §8): where an account's payments go. The document is what the API shows;
-- its secrets are sealed apart (sealed_values, owned by the connector's id) and outlive it, so a
-- deleted connector's payments can still be captured, canceled, refunded and synced.
CREATE TABLE connectors (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    livemode   INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    status     TEXT,
    body       TEXT NOT NULL
);
CREATE INDEX connectors_scope ON connectors(account_id, livemode, seq);
