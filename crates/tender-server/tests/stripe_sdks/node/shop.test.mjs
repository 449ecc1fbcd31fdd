// A shop's Stripe code, unchanged but for the address, against a real `tender serve`: the
// official stripe-node (pinned: 23.1.0), run by tests/stripe_sdks.rs with TENDER_BASE and
// TENDER_SK in the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';

const base = new URL(process.env.TENDER_BASE);
const stripe = new Stripe(process.env.TENDER_SK, {
  host: base.hostname,
  port: Number(base.port),
  protocol: base.protocol.replace(':', ''),
  maxNetworkRetries: 0,
});

test('the SDK is the pinned one', () => {
  assert.equal(Stripe.PACKAGE_VERSION, '23.1.0');
  assert.equal(Stripe.API_VERSION, '2026-10-28.endive');
});

test('a saved card pays, is refunded, and lists page by page', async () => {
  const customer = await stripe.customers.create({ email: `node-${Date.now()}@example.com`, metadata: { plan: 'pro' } });
  const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
  assert.equal(pm.card.last4, '4242');
  const intent = await stripe.paymentIntents.create({
    amount: 2000,
    currency: 'usd',
    customer: customer.id,
    payment_method: pm.id,
    confirm: true,
    expand: ['latest_charge'],
  });
  assert.equal(intent.status, 'succeeded');
  assert.equal(intent.latest_charge.payment_method_details.card.brand, 'visa');
  const refund = await stripe.refunds.create({ payment_intent: intent.id, amount: 700 });
  assert.equal(refund.status, 'succeeded');
  assert.equal((await stripe.charges.retrieve(intent.latest_charge.id)).amount_refunded, 700);
  for (let i = 0; i < 4; i++) {
    await stripe.paymentIntents.create({ amount: 1000 + i, currency: 'usd', customer: customer.id, payment_method: 'pm_card_visa', confirm: true });
  }
  const seen = [];
  for await (const pi of stripe.paymentIntents.list({ customer: customer.id, limit: 2 })) {
    seen.push(pi.id);
  }
  assert.equal(seen.length, 5);
  assert.equal(new Set(seen).size, 5);
});

test('a setup intent saves a card for later', async () => {
  const customer = await stripe.customers.create({ email: `setup-${Date.now()}@example.com` });
  const setup = await stripe.setupIntents.create({ customer: customer.id, payment_method: 'pm_card_visa', confirm: true });
  assert.equal(setup.status, 'succeeded');
  assert.ok(setup.client_secret.startsWith(`${setup.id}_secret_`));
  const again = await stripe.setupIntents.retrieve(setup.id, { expand: ['payment_method'] });
  assert.equal(again.payment_method.card.last4, '4242');
  assert.equal(again.payment_method.customer, customer.id);
  await assert.rejects(
    stripe.setupIntents.create({ customer: customer.id, payment_method: 'pm_card_chargeDeclinedExpiredCard', confirm: true }),
    (err) => err instanceof Stripe.errors.StripeCardError && err.raw.setup_intent.last_setup_error.code === 'expired_card',
  );
});

test('errors are the SDK\'s classes', async () => {
  await assert.rejects(
    stripe.paymentIntents.create({ amount: 1500, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true }),
    (err) => {
      assert.ok(err instanceof Stripe.errors.StripeCardError);
      assert.equal(err.code, 'card_declined');
      assert.equal(err.decline_code, 'generic_decline');
      assert.equal(err.payment_intent.status, 'requires_payment_method');
      return true;
    },
  );
  await assert.rejects(stripe.customers.create({ email: 'x@example.com', colour: 'red' }), (err) => {
    assert.ok(err instanceof Stripe.errors.StripeInvalidRequestError);
    assert.equal(err.code, 'parameter_unknown');
    assert.equal(err.param, 'colour');
    return true;
  });
  const wrong = new Stripe('sk_test_notakey', { host: base.hostname, port: Number(base.port), protocol: 'http', maxNetworkRetries: 0 });
  await assert.rejects(wrong.customers.list(), Stripe.errors.StripeAuthenticationError);
  const key = `node-${Date.now()}`;
  await stripe.customers.create({ email: 'once@example.com' }, { idempotencyKey: key });
  await assert.rejects(stripe.customers.create({ email: 'twice@example.com' }, { idempotencyKey: key }), Stripe.errors.StripeIdempotencyError);
});

test('manual capture and an intent confirmed later', async () => {
  const held = await stripe.paymentIntents.create({ amount: 5000, currency: 'eur', payment_method: 'pm_card_visa', capture_method: 'manual', confirm: true });
  assert.equal(held.status, 'requires_capture');
  const captured = await stripe.paymentIntents.capture(held.id);
  assert.equal(captured.amount_received, 5000);
  const later = await stripe.paymentIntents.create({ amount: 800, currency: 'usd' });
  assert.equal(later.status, 'requires_payment_method');
  const done = await stripe.paymentIntents.confirm(later.id, { payment_method: 'pm_card_amex' });
  assert.equal(done.status, 'succeeded');
});

test('a subscription on a test clock, advanced a month', async () => {
  const start = 1_900_000_000;
  const clock = await stripe.testHelpers.testClocks.create({ frozen_time: start });
  const customer = await stripe.customers.create({ email: 'saas@example.com', test_clock: clock.id });
  const pm = await stripe.paymentMethods.attach('pm_card_mastercard', { customer: customer.id });
  const price = await stripe.prices.create({ product: (await stripe.products.create({ name: 'Plan' })).id, currency: 'eur', unit_amount: 900, recurring: { interval: 'month' } });
  const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }], default_payment_method: pm.id });
  assert.equal(sub.status, 'active');
  const preview = await stripe.invoices.createPreview({ subscription: sub.id });
  assert.deepEqual([preview.amount_due, preview.billing_reason, preview.period_start], [900, 'upcoming', sub.items.data[0].current_period_end]);
  assert.equal(preview.number, null);
  // A hold for the clock's customer expires in the clock's time (7 days), not in real time.
  const held = await stripe.paymentIntents.create({ amount: 1200, currency: 'eur', customer: customer.id, payment_method: pm.id, capture_method: 'manual', confirm: true });
  assert.equal(held.status, 'requires_capture');
  await stripe.testHelpers.testClocks.advance(clock.id, { frozen_time: start + 35 * 86400 });
  let ready = false;
  for (let i = 0; i < 600 && !ready; i++) {
    ready = (await stripe.testHelpers.testClocks.retrieve(clock.id)).status === 'ready';
    if (!ready) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(ready, 'the clock finished advancing');
  const invoices = await stripe.invoices.list({ subscription: sub.id });
  assert.deepEqual(invoices.data.map((i) => [i.status, i.amount_paid]), [['paid', 900], ['paid', 900]]);
  // Numbered one after the other (the list is newest first), each with its PDF.
  const [newer, older] = invoices.data.map((i) => i.number.split('-'));
  assert.equal(newer[0], older[0]);
  assert.equal(Number(newer[1]), Number(older[1]) + 1);
  assert.ok(invoices.data.every((i) => i.invoice_pdf === `${i.hosted_invoice_url}/pdf`));
  assert.equal((await stripe.paymentIntents.retrieve(held.id)).status, 'canceled');
  const balance = await stripe.balance.retrieve();
  assert.ok(Array.isArray(balance.available));
});

test('a webhook verifies with constructEvent', async () => {
  const http = await import('node:http');
  const received = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => { received.push([body, req.headers['stripe-signature']]); res.end('ok'); });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try {
    const endpoint = await stripe.webhookEndpoints.create({ url: `http://127.0.0.1:${server.address().port}/hook`, enabled_events: ['charge.succeeded', 'payment_intent.created'] });
    const intent = await stripe.paymentIntents.create({ amount: 1700, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    for (let i = 0; i < 600 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(received.length, 2);
    const events = received.map(([body, signature]) => stripe.webhooks.constructEvent(body, signature, endpoint.secret));
    assert.deepEqual(events.map((e) => e.type).sort(), ['charge.succeeded', 'payment_intent.created']);
    const event = events.find((e) => e.type === 'charge.succeeded');
    assert.equal(event.data.object.payment_intent, intent.id);
    assert.equal(events.find((e) => e.type === 'payment_intent.created').data.object.id, intent.id);
    assert.throws(() => stripe.webhooks.constructEvent(received[0][0], received[0][1], 'whsec_wrong'));
    await stripe.webhookEndpoints.del(endpoint.id);
  } finally {
    server.close();
  }
});

// The customer's browser on the hosted Checkout page (no JavaScript): the page, its one-time
// token, the form posted; the answer's status and Location, not followed.
async function payOnPage(url, number) {
  const html = await (await fetch(url)).text();
  const token = html.match(/name="token" value="([^"]+)"/)[1];
  const answer = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({ token, email: 'node-buyer@example.com', card_number: number, card_expiry: '12 / 34', card_cvc: '123' }),
  });
  return { status: answer.status, location: answer.headers.get('location') };
}

test('a Checkout Session as the Next.js SaaS starter creates and reads it', async () => {
  const price = await stripe.prices.create({
    currency: 'usd', unit_amount: 800, recurring: { interval: 'month' }, product_data: { name: 'Base' },
  });
  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    line_items: [{ price: price.id, quantity: 1 }],
    success_url: 'https://saas.example/api/stripe/checkout?session_id={CHECKOUT_SESSION_ID}',
    cancel_url: 'https://saas.example/pricing',
    client_reference_id: 'user_7',
    allow_promotion_codes: true,
    subscription_data: { trial_period_days: 14 },
  });
  assert.equal(session.object, 'checkout.session');
  assert.equal(session.status, 'open');

  const declined = await payOnPage(session.url, '4000000000000002');
  assert.equal(declined.status, 402);
  const paid = await payOnPage(session.url, '4242424242424242');
  assert.equal(paid.status, 303);
  assert.equal(paid.location, `https://saas.example/api/stripe/checkout?session_id=${session.id}`);

  // The starter's success route: the session with its customer and subscription expanded.
  const done = await stripe.checkout.sessions.retrieve(session.id, { expand: ['customer', 'subscription'] });
  assert.equal(done.status, 'complete');
  assert.equal(done.client_reference_id, 'user_7');
  assert.equal(done.customer.email, 'node-buyer@example.com');
  assert.equal(done.subscription.status, 'trialing');
  assert.equal(done.subscription.items.data[0].price.id, price.id);
  const lines = await stripe.checkout.sessions.listLineItems(session.id);
  assert.deepEqual(lines.data.map((l) => [l.price.id, l.quantity]), [[price.id, 1]]);
  await assert.rejects(stripe.checkout.sessions.expire(session.id), (err) => err instanceof Stripe.errors.StripeInvalidRequestError);
});
