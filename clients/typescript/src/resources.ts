/**
 * The API's resources, one class each, every endpoint a method (docs/api.md has what each does).
 * Parameters and answers are typed by `schema.ts`, generated from the OpenAPI document.
 * `POST` methods take `{ idempotencyKey }` (one is generated per call otherwise, the same on
 * every retry).
 */

import type { Query, Transport } from "./http.js";
import { Page } from "./pagination.js";
import type { components } from "./schema.js";

export type Schemas = components["schemas"];

export interface PostOptions {
  idempotencyKey?: string;
}

class Resource {
  constructor(protected readonly t: Transport) {}
}


/** Card and bank-transfer payments. */
export class Payments extends Resource {
  create(params: Schemas["PaymentCreate"], options: PostOptions = {}): Promise<Schemas["Payment"]> {
    return this.t.request("POST", `/payments`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Payment"]> {
    return this.t.request("GET", `/payments/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["PaymentUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["Payment"]> {
    return this.t.request("POST", `/payments/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  capture(id: string, params: Schemas["PaymentCapture"] = {}, options: PostOptions = {}): Promise<Schemas["Payment"]> {
    return this.t.request("POST", `/payments/${encodeURIComponent(id)}/capture`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  cancel(id: string, params: Schemas["PaymentCancel"] = {}, options: PostOptions = {}): Promise<Schemas["Payment"]> {
    return this.t.request("POST", `/payments/${encodeURIComponent(id)}/cancel`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Payment"]>> {
    return Page.fetch(this.t, `/payments`, query);
  }
}

/** Saved cards (tokenised with a publishable or secret key). */
export class PaymentMethods extends Resource {
  create(params: Schemas["PaymentMethodCreate"], options: PostOptions = {}): Promise<Schemas["PaymentMethod"]> {
    return this.t.request("POST", `/payment_methods`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["PaymentMethod"]> {
    return this.t.request("GET", `/payment_methods/${encodeURIComponent(id)}`);
  }
  attach(id: string, params: Schemas["PaymentMethodAttach"], options: PostOptions = {}): Promise<Schemas["PaymentMethod"]> {
    return this.t.request("POST", `/payment_methods/${encodeURIComponent(id)}/attach`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  detach(id: string, params: Schemas["PaymentMethodDetach"] = {}, options: PostOptions = {}): Promise<Schemas["PaymentMethod"]> {
    return this.t.request("POST", `/payment_methods/${encodeURIComponent(id)}/detach`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["PaymentMethod"]>> {
    return Page.fetch(this.t, `/payment_methods`, query);
  }
}

/** Customers. */
export class Customers extends Resource {
  create(params: Schemas["CustomerCreate"] = {}, options: PostOptions = {}): Promise<Schemas["Customer"]> {
    return this.t.request("POST", `/customers`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Customer"]> {
    return this.t.request("GET", `/customers/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["CustomerFields"] = {}, options: PostOptions = {}): Promise<Schemas["Customer"]> {
    return this.t.request("POST", `/customers/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  delete(id: string): Promise<Schemas["DeletedCustomer"]> {
    return this.t.request("DELETE", `/customers/${encodeURIComponent(id)}`);
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Customer"]>> {
    return Page.fetch(this.t, `/customers`, query);
  }
}

/** Refunds of payments, whole or in parts. */
export class Refunds extends Resource {
  create(params: Schemas["RefundCreate"], options: PostOptions = {}): Promise<Schemas["Refund"]> {
    return this.t.request("POST", `/refunds`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Refund"]> {
    return this.t.request("GET", `/refunds/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["RefundUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["Refund"]> {
    return this.t.request("POST", `/refunds/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Refund"]>> {
    return Page.fetch(this.t, `/refunds`, query);
  }
}

/** Events, the account's history; each is sent to the matching webhook endpoints. */
export class Events extends Resource {
  retrieve(id: string): Promise<Schemas["Event"]> {
    return this.t.request("GET", `/events/${encodeURIComponent(id)}`);
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Event"]>> {
    return Page.fetch(this.t, `/events`, query);
  }
  /**
   * The account's new events as they are committed, oldest first, over one connection
   * (`GET /events/stream`): those after the event `after` names (the last one you saw), else
   * those after the newest at connection time. It ends with an `APIConnectionError` when the
   * connection drops: call again with the last id you saw, and nothing is missed. Abort
   * `signal` to stop.
   */
  async *stream(opts: { after?: string; signal?: AbortSignal } = {}): AsyncGenerator<Schemas["Event"]> {
    for await (const [, data] of this.t.stream("/events/stream", { lastEventId: opts.after, signal: opts.signal })) {
      yield JSON.parse(data) as Schemas["Event"];
    }
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  listDeliveries(id: string, query: Query = {}): Promise<Page<Schemas["WebhookDelivery"]>> {
    return Page.fetch(this.t, `/events/${encodeURIComponent(id)}/deliveries`, query);
  }
  resend(id: string, params: Schemas["EventResend"], options: PostOptions = {}): Promise<Schemas["WebhookDelivery"]> {
    return this.t.request("POST", `/events/${encodeURIComponent(id)}/resend`, { body: params, idempotencyKey: options.idempotencyKey });
  }
}

/** Where events are sent. */
export class WebhookEndpoints extends Resource {
  create(params: Schemas["WebhookEndpointCreate"], options: PostOptions = {}): Promise<Schemas["WebhookEndpointWithSecret"]> {
    return this.t.request("POST", `/webhook_endpoints`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["WebhookEndpoint"]> {
    return this.t.request("GET", `/webhook_endpoints/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["WebhookEndpointUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["WebhookEndpoint"]> {
    return this.t.request("POST", `/webhook_endpoints/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  delete(id: string): Promise<Schemas["DeletedWebhookEndpoint"]> {
    return this.t.request("DELETE", `/webhook_endpoints/${encodeURIComponent(id)}`);
  }
  rollSecret(id: string, params: Schemas["WebhookEndpointRollSecret"] = {}, options: PostOptions = {}): Promise<Schemas["WebhookEndpointWithSecret"]> {
    return this.t.request("POST", `/webhook_endpoints/${encodeURIComponent(id)}/roll_secret`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["WebhookEndpoint"]>> {
    return Page.fetch(this.t, `/webhook_endpoints`, query);
  }
}

/** Real processors behind the API. */
export class Connectors extends Resource {
  create(params: Schemas["ConnectorCreate"], options: PostOptions = {}): Promise<Schemas["Connector"]> {
    return this.t.request("POST", `/connectors`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Connector"]> {
    return this.t.request("GET", `/connectors/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["ConnectorUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["Connector"]> {
    return this.t.request("POST", `/connectors/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  delete(id: string): Promise<Schemas["DeletedConnector"]> {
    return this.t.request("DELETE", `/connectors/${encodeURIComponent(id)}`);
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Connector"]>> {
    return Page.fetch(this.t, `/connectors`, query);
  }
}

/** Every movement of the balance. */
export class BalanceTransactions extends Resource {
  retrieve(id: string): Promise<Schemas["BalanceTransaction"]> {
    return this.t.request("GET", `/balance_transactions/${encodeURIComponent(id)}`);
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["BalanceTransaction"]>> {
    return Page.fetch(this.t, `/balance_transactions`, query);
  }
}

/** Money sent from the balance to the merchant's bank account. */
export class Payouts extends Resource {
  create(params: Schemas["PayoutCreate"], options: PostOptions = {}): Promise<Schemas["Payout"]> {
    return this.t.request("POST", `/payouts`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Payout"]> {
    return this.t.request("GET", `/payouts/${encodeURIComponent(id)}`);
  }
  cancel(id: string, params: Schemas["PayoutCancel"] = {}, options: PostOptions = {}): Promise<Schemas["Payout"]> {
    return this.t.request("POST", `/payouts/${encodeURIComponent(id)}/cancel`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Payout"]>> {
    return Page.fetch(this.t, `/payouts`, query);
  }
}

/** Chargebacks, and the evidence against them. */
export class Disputes extends Resource {
  retrieve(id: string): Promise<Schemas["Dispute"]> {
    return this.t.request("GET", `/disputes/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["DisputeUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["Dispute"]> {
    return this.t.request("POST", `/disputes/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  close(id: string, params: Schemas["DisputeClose"] = {}, options: PostOptions = {}): Promise<Schemas["Dispute"]> {
    return this.t.request("POST", `/disputes/${encodeURIComponent(id)}/close`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Dispute"]>> {
    return Page.fetch(this.t, `/disputes`, query);
  }
}

/** What subscriptions sell. */
export class Products extends Resource {
  create(params: Schemas["ProductCreate"], options: PostOptions = {}): Promise<Schemas["Product"]> {
    return this.t.request("POST", `/products`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Product"]> {
    return this.t.request("GET", `/products/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["ProductUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["Product"]> {
    return this.t.request("POST", `/products/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  delete(id: string): Promise<Schemas["DeletedProduct"]> {
    return this.t.request("DELETE", `/products/${encodeURIComponent(id)}`);
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Product"]>> {
    return Page.fetch(this.t, `/products`, query);
  }
}

/** A product's price and billing interval. */
export class Prices extends Resource {
  create(params: Schemas["PriceCreate"], options: PostOptions = {}): Promise<Schemas["Price"]> {
    return this.t.request("POST", `/prices`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Price"]> {
    return this.t.request("GET", `/prices/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["PriceUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["Price"]> {
    return this.t.request("POST", `/prices/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Price"]>> {
    return Page.fetch(this.t, `/prices`, query);
  }
}

/** Recurring billing of a customer. */
export class Subscriptions extends Resource {
  create(params: Schemas["SubscriptionCreate"], options: PostOptions = {}): Promise<Schemas["Subscription"]> {
    return this.t.request("POST", `/subscriptions`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["Subscription"]> {
    return this.t.request("GET", `/subscriptions/${encodeURIComponent(id)}`);
  }
  update(id: string, params: Schemas["SubscriptionUpdate"] = {}, options: PostOptions = {}): Promise<Schemas["Subscription"]> {
    return this.t.request("POST", `/subscriptions/${encodeURIComponent(id)}`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  cancel(id: string): Promise<Schemas["Subscription"]> {
    return this.t.request("DELETE", `/subscriptions/${encodeURIComponent(id)}`);
  }
  /** A paused subscription starts a new period now; its invoice is tried at once. */
  resume(id: string, options: PostOptions = {}): Promise<Schemas["Subscription"]> {
    return this.t.request("POST", `/subscriptions/${encodeURIComponent(id)}/resume`, { idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Subscription"]>> {
    return Page.fetch(this.t, `/subscriptions`, query);
  }
}

/** A subscription's bills. */
export class Invoices extends Resource {
  retrieve(id: string): Promise<Schemas["Invoice"]> {
    return this.t.request("GET", `/invoices/${encodeURIComponent(id)}`);
  }
  pay(id: string, params: Schemas["InvoicePay"] = {}, options: PostOptions = {}): Promise<Schemas["Invoice"]> {
    return this.t.request("POST", `/invoices/${encodeURIComponent(id)}/pay`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  void(id: string, options: PostOptions = {}): Promise<Schemas["Invoice"]> {
    return this.t.request("POST", `/invoices/${encodeURIComponent(id)}/void`, { idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["Invoice"]>> {
    return Page.fetch(this.t, `/invoices`, query);
  }
}

/** Test-mode clocks that move billing through time. */
export class TestClocks extends Resource {
  create(params: Schemas["TestClockCreate"], options: PostOptions = {}): Promise<Schemas["TestClock"]> {
    return this.t.request("POST", `/test_helpers/test_clocks`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  retrieve(id: string): Promise<Schemas["TestClock"]> {
    return this.t.request("GET", `/test_helpers/test_clocks/${encodeURIComponent(id)}`);
  }
  delete(id: string): Promise<Schemas["DeletedTestClock"]> {
    return this.t.request("DELETE", `/test_helpers/test_clocks/${encodeURIComponent(id)}`);
  }
  advance(id: string, params: Schemas["TestClockAdvance"], options: PostOptions = {}): Promise<Schemas["TestClock"]> {
    return this.t.request("POST", `/test_helpers/test_clocks/${encodeURIComponent(id)}/advance`, { body: params, idempotencyKey: options.idempotencyKey });
  }
  /** One page (`limit`, `starting_after`, `ending_before`, `created: { gte: … }`, filters); `for await` over it walks every page. */
  list(query: Query = {}): Promise<Page<Schemas["TestClock"]>> {
    return Page.fetch(this.t, `/test_helpers/test_clocks`, query);
  }
}

/** The account's balance: available and pending, per currency. */
export class Balance extends Resource {
  retrieve(): Promise<Schemas["Balance"]> {
    return this.t.request("GET", "/balance");
  }
}
