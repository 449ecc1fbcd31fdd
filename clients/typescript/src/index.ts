/**
 * Tender's TypeScript client: every endpoint of the API, typed objects and errors, retries with
 * one idempotency key per call, pagination, and webhook verification. See README.md.
 */

import { DEFAULT_RETRY, Transport, type RetryPolicy } from "./http.js";
import {
  Balance,
  BalanceTransactions,
  Connectors,
  Customers,
  Disputes,
  Events,
  Invoices,
  PaymentMethods,
  Payments,
  Payouts,
  Prices,
  Products,
  Refunds,
  Subscriptions,
  TestClocks,
  WebhookEndpoints,
} from "./resources.js";

export * from "./errors.js";
export { API_VERSION, DEFAULT_RETRY, VERSION, type RetryPolicy } from "./http.js";
export { Page } from "./pagination.js";
export type { PostOptions, Schemas } from "./resources.js";
export type { components, operations, paths } from "./schema.js";
export * as webhooks from "./webhooks.js";
export { SignatureVerificationError } from "./webhooks.js";

export const DEFAULT_BASE_URL = "http://127.0.0.1:4242";

export interface TenderOptions {
  baseUrl?: string;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
}

/** A client of one Tender account and mode (the key decides which). */
export class Tender {
  /** The HTTP layer (its `sleep` may be replaced, as the tests do). */
  readonly transport: Transport;
  readonly payments: Payments;
  readonly paymentMethods: PaymentMethods;
  readonly customers: Customers;
  readonly refunds: Refunds;
  readonly events: Events;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly connectors: Connectors;
  readonly balanceTransactions: BalanceTransactions;
  readonly payouts: Payouts;
  readonly disputes: Disputes;
  readonly products: Products;
  readonly prices: Prices;
  readonly subscriptions: Subscriptions;
  readonly invoices: Invoices;
  readonly testClocks: TestClocks;
  readonly balance: Balance;

  constructor(apiKey: string, options: TenderOptions = {}) {
    const t = new Transport(apiKey, {
      baseUrl: options.baseUrl ?? DEFAULT_BASE_URL,
      retry: { ...DEFAULT_RETRY, ...options.retry },
      timeoutMs: options.timeoutMs ?? 30000,
    });
    this.transport = t;
    this.payments = new Payments(t);
    this.paymentMethods = new PaymentMethods(t);
    this.customers = new Customers(t);
    this.refunds = new Refunds(t);
    this.events = new Events(t);
    this.webhookEndpoints = new WebhookEndpoints(t);
    this.connectors = new Connectors(t);
    this.balanceTransactions = new BalanceTransactions(t);
    this.payouts = new Payouts(t);
    this.disputes = new Disputes(t);
    this.products = new Products(t);
    this.prices = new Prices(t);
    this.subscriptions = new Subscriptions(t);
    this.invoices = new Invoices(t);
    this.testClocks = new TestClocks(t);
    this.balance = new Balance(t);
  }
}
