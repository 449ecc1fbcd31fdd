-- The settings of an account's public payment surfaces (CONTRACT §14): the card-testing
-- guard's limits and the shop origins that may frame the card field, as one JSON text; NULL is
-- the defaults. (Numbered in lockstep with migrations/postgres/0017.)
ALTER TABLE accounts ADD COLUMN checkout_settings TEXT;
