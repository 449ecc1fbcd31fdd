/** The walkthrough of README.md against a real `tender serve`: a customer, a payment, a
 * decline, a refund, paging, a webhook verified with both schemes, errors by type. */

import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";

import {
  AuthenticationError,
  CardError,
  IdempotencyError,
  InvalidRequestError,
  SignatureVerificationError,
  Tender,
  webhooks,
  type Schemas,
} from "../src/index.js";
import { startServer, type Server } from "./server.js";

const VISA: Schemas["CardPaymentMethodInput"] = {
  type: "card",
  card: { number: "4242424242424242", exp_month: 12, exp_year: 2035, cvc: "123" },
};
const DECLINED: Schemas["CardPaymentMethodInput"] = {
  type: "card",
  card: { number: "4000000000009995", exp_month: 12, exp_year: 2035, cvc: "123" },
};

let server: Server;
let tender: Tender;

before(async () => {
  server = await startServer();
  tender = new Tender(server.secretKey, { baseUrl: server.baseUrl });
});
after(() => server.stop());

test("customer, payment, refund", async () => {
  const customer = await tender.customers.create({ email: "ada@example.com", name: "Ada" });
  assert.match(customer.id, /^cus_/);
  const payment = await tender.payments.create({
    amount: 2500,
    currency: "usd",
    customer: customer.id,
    payment_method: VISA,
    metadata: { order: "1001" },
  });
  assert.equal(payment.status, "succeeded");
  // null only while a payment created through /v1 awaits a method; never after a create.
  assert.equal(payment.payment_method?.card?.last4, "4242");
  const refund = await tender.refunds.create({ payment: payment.id, amount: 1000 });
  assert.equal(refund.status, "succeeded");
  const again = await tender.payments.retrieve(payment.id);
  assert.equal(again.amount_refunded, 1000);
  assert.deepEqual(again.metadata, { order: "1001" });
});

test("a decline throws CardError with its payment", async () => {
  const err = await tender.payments.create({ amount: 1500, currency: "usd", payment_method: DECLINED }).then(
    () => assert.fail("a decline must throw"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof CardError);
  assert.equal(err.status, 402);
  assert.equal(err.code, "card_declined");
  assert.equal(err.declineCode, "insufficient_funds");
  assert.match(err.payment ?? "", /^pay_/);
  const failed = await tender.payments.retrieve(err.payment!);
  assert.equal(failed.status, "failed");
});

test("bad input, a missing object and a wrong key throw typed errors", async () => {
  await assert.rejects(tender.payments.create({ amount: -5, currency: "usd", payment_method: VISA }), (e: unknown) => {
    assert.ok(e instanceof InvalidRequestError);
    assert.equal(e.param, "amount");
    return true;
  });
  await assert.rejects(tender.payments.retrieve("pay_doesnotexist000000000000"), (e: unknown) => {
    assert.ok(e instanceof InvalidRequestError);
    assert.equal(e.status, 404);
    return true;
  });
  const wrong = new Tender("sk_test_wrong", { baseUrl: server.baseUrl });
  await assert.rejects(wrong.customers.list(), AuthenticationError);
});

test("the same idempotency key replays the payment", async () => {
  const first = await tender.payments.create({ amount: 700, currency: "usd", payment_method: VISA }, { idempotencyKey: "ts-order-7" });
  const second = await tender.payments.create({ amount: 700, currency: "usd", payment_method: VISA }, { idempotencyKey: "ts-order-7" });
  assert.equal(first.id, second.id);
  await assert.rejects(
    tender.payments.create({ amount: 701, currency: "usd", payment_method: VISA }, { idempotencyKey: "ts-order-7" }),
    (e: unknown) => e instanceof IdempotencyError && e.status === 400,
  );
});

test("pages through every payment newest first", async () => {
  const customer = await tender.customers.create({ email: "pager@example.com" });
  const made: string[] = [];
  for (let i = 0; i < 7; i++) {
    made.push((await tender.payments.create({ amount: 100 + i, currency: "usd", customer: customer.id, payment_method: VISA })).id);
  }
  const page = await tender.payments.list({ customer: customer.id, limit: 3 });
  assert.equal(page.data.length, 3);
  assert.ok(page.hasMore);
  const seen: string[] = [];
  for await (const p of page) seen.push(p.id);
  assert.deepEqual(seen, made.reverse());
});

test("a delivered webhook verifies with both schemes", async () => {
  const got: { body: Buffer; headers: IncomingHttpHeaders }[] = [];
  let arrived!: () => void;
  const delivered = new Promise<void>((r) => (arrived = r));
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ body: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(200).end();
      arrived();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as AddressInfo).port;
  try {
    const endpoint = await tender.webhookEndpoints.create({ url: `http://127.0.0.1:${port}/hook`, enabled_events: ["customer.created"] });
    const customer = await tender.customers.create({ email: "hooked@example.com" });
    await Promise.race([delivered, new Promise((_, no) => setTimeout(() => no(new Error("no delivery within 10 s")), 10000))]);
    const { body, headers } = got[0]!;
    const event = webhooks.constructEvent(body, String(headers["tender-signature"]), endpoint.secret);
    assert.equal(event.type, "customer.created");
    // Not every event's object has an id (balance.available's balance): narrow first.
    assert.ok("id" in event.data.object);
    assert.equal(event.data.object.id, customer.id);
    const standard = webhooks.constructEventStandard(body, headers, endpoint.secret);
    assert.equal(standard.id, event.id);
    assert.throws(() => webhooks.constructEvent(Buffer.concat([body, Buffer.from(" ")]), String(headers["tender-signature"]), endpoint.secret), SignatureVerificationError);
    assert.throws(() => webhooks.constructEventStandard(body, headers, "whsec_" + "A".repeat(43) + "="), SignatureVerificationError);
    const stamp = Number(headers["webhook-timestamp"]);
    assert.throws(() => webhooks.constructEvent(body, String(headers["tender-signature"]), endpoint.secret, { now: stamp + 301 }), SignatureVerificationError);
  } finally {
    receiver.close();
  }
});

test("the event stream yields new events and resumes after the last one", async () => {
  await tender.customers.create({ name: "Before" });
  const newest = (await tender.events.list({ limit: 1 })).data[0]!.id;
  const stop = new AbortController();
  const stream = tender.events.stream({ after: newest, signal: stop.signal });
  const first = await tender.customers.create({ name: "First" });
  const second = await tender.customers.create({ name: "Second" });
  const a = (await stream.next()).value as Schemas["Event"];
  const b = (await stream.next()).value as Schemas["Event"];
  assert.equal(a.type, "customer.created");
  assert.equal((a.data.object as { id: string }).id, first.id);
  assert.equal((b.data.object as { id: string }).id, second.id);
  assert.deepEqual(a, await tender.events.retrieve(a.id));
  stop.abort();
  await stream.return(undefined);
  // Resuming after the first replays the second.
  const resumed = new AbortController();
  const again = tender.events.stream({ after: a.id, signal: resumed.signal });
  assert.equal(((await again.next()).value as Schemas["Event"]).id, b.id);
  resumed.abort();
  await again.return(undefined);
  await assert.rejects(tender.events.stream({ after: "evt_doesnotexist" }).next(), (e: unknown) => {
    assert.ok(e instanceof InvalidRequestError);
    assert.equal(e.code, "resource_missing");
    return true;
  });
});

test("a trial set to pause without a card is resumed only once paused", async () => {
  const customer = await tender.customers.create({ email: "trial@example.com" });
  const product = await tender.products.create({ name: "Plan" });
  const price = await tender.prices.create({ product: product.id, currency: "usd", unit_amount: 900, recurring: { interval: "month" } });
  const sub = await tender.subscriptions.create({
    customer: customer.id,
    items: [{ price: price.id }],
    trial_period_days: 7,
    trial_settings: { end_behavior: { missing_payment_method: "pause" } },
  });
  assert.equal(sub.status, "trialing");
  assert.equal(sub.trial_settings.end_behavior.missing_payment_method, "pause");
  await assert.rejects(tender.subscriptions.resume(sub.id), (e: unknown) => e instanceof InvalidRequestError && e.code === "subscription_unexpected_state");
});

