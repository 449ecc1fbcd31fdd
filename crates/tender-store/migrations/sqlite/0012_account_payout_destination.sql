-- An account's default payout destination (CONTRACT §13: `POST /v1/payouts` pays out there),
-- set in the dashboard or with `tender accounts payout-destination`: its IBAN and holder as one
-- value sealed with the vault key, never in clear. (Numbered in lockstep with migrations/postgres/0012.)
ALTER TABLE accounts ADD COLUMN payout_destination TEXT;
