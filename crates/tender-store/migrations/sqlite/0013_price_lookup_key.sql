-- A price's lookup key (CONTRACT §13: Stripe's `lookup_key`, and lists by `lookup_keys[]`):
-- a column to find a price by, unique among an account's prices in a mode (the batch that
-- sets one checks that no other price has it). (Numbered in lockstep with migrations/postgres/0013.)
ALTER TABLE prices ADD COLUMN lookup_key TEXT;
CREATE INDEX prices_lookup_key ON prices(account_id, livemode, lookup_key);
