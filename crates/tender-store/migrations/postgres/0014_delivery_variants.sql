-- A webhook delivery is one event to one endpoint under one of its names: an endpoint made
-- through /v1 gets each Stripe name of an event it listens to as its own delivery (a payment's
-- success is payment_intent.succeeded and charge.succeeded). `variant` is that Stripe name;
-- '' for an endpoint of Tender's dialect, and for a /v1 endpoint whose index predates this
-- (it hears each event under the first name it listens to, as before).
-- (Numbered in lockstep with migrations/sqlite/0014.)
ALTER TABLE webhook_deliveries ADD COLUMN variant TEXT NOT NULL DEFAULT '';
DROP INDEX webhook_deliveries_event;
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries(event_id, endpoint_id, variant);
