/**
 * The transport: authentication, the `Tender-Version` pin, idempotency keys, retries with
 * backoff. Retried: network errors, 409 `idempotency_error` (the same key in flight), 429 and
 * 5xx, after `Retry-After` when sent, else after an exponential backoff with jitter. Every
 * `POST` carries one `Idempotency-Key` for all its tries, so a retried payment is never charged
 * twice. Never retried: any other 4xx.
 */

import { randomUUID } from "node:crypto";

import { APIConnectionError, errorFrom } from "./errors.js";

export const API_VERSION = "2.1";
export const VERSION = "0.1.0";

export interface RetryPolicy {
  /** Retries after the first try (0 disables retrying). Default 3. */
  maxRetries: number;
  /** Milliseconds before the first retry; doubled each retry, with 50–100 % jitter. Default 500. */
  initialBackoffMs: number;
  /** Default 8000. */
  maxBackoffMs: number;
  /** The longest `Retry-After` waited for, in ms; a longer one is thrown. Default 60000. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 3,
  initialBackoffMs: 500,
  maxBackoffMs: 8000,
  maxRetryAfterMs: 60000,
};

export type Query = Record<string, string | number | boolean | Record<string, string | number> | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: object;
  idempotencyKey?: string;
}

export interface TransportOptions {
  baseUrl: string;
  retry: RetryPolicy;
  timeoutMs: number;
  /** How to wait between tries (tests record the waits). */
  sleep?: (ms: number) => Promise<void>;
}

export class Transport {
  readonly baseUrl: string;
  sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly apiKey: string,
    private readonly options: TransportOptions,
  ) {
    if (!apiKey) throw new TypeError("an API key is required (sk_test_… or sk_live_…)");
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  private headers(): Record<string, string> {
    return {
      Authorization: `Bearer ${this.apiKey}`,
      "Tender-Version": API_VERSION,
      "User-Agent": `tender-node/${VERSION}`,
    };
  }

  /**
   * Server-sent events from `path` over one connection, as `[id, data]` pairs, until the
   * connection ends (not retried: call again with the last id). A refusal throws the typed
   * error before anything is yielded; `signal` closes the connection.
   */
  async *stream(
    path: string,
    opts: { lastEventId?: string; signal?: AbortSignal } = {},
  ): AsyncGenerator<[string, string]> {
    const headers: Record<string, string> = { ...this.headers(), Accept: "text/event-stream" };
    if (opts.lastEventId !== undefined) headers["Last-Event-ID"] = opts.lastEventId;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/v2${path}`, { headers, signal: opts.signal });
    } catch (e) {
      throw new APIConnectionError(`could not reach Tender at ${this.baseUrl}: ${String(e)}`);
    }
    if (!response.ok || response.body === null) {
      const parsed = jsonOrNull(await response.text());
      throw errorFrom(response.status, parsed);
    }
    const decoder = new TextDecoder();
    let buffered = "";
    let id = "";
    let data: string[] = [];
    try {
      for await (const chunk of response.body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, end).replace(/\r$/, "");
          buffered = buffered.slice(end + 1);
          if (line === "") {
            if (id && data.length > 0) yield [id, data.join("\n")];
            id = "";
            data = [];
          } else if (!line.startsWith(":")) {
            const colon = line.indexOf(":");
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            if (field === "id") id = value;
            else if (field === "data") data.push(value);
          }
        }
      }
    } catch (e) {
      if (opts.signal?.aborted) return;
      throw new APIConnectionError(`the stream from ${this.baseUrl} broke: ${String(e)}`);
    }
  }

  /** Sends the call, retrying as the policy allows, and returns the JSON object. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const headers = this.headers();
    let body: string | undefined;
    if (method === "POST") {
      headers["Idempotency-Key"] = opts.idempotencyKey ?? `tender-node-${randomUUID()}`;
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.body ?? {});
    }
    const url = `${this.baseUrl}/v2${path}${queryString(opts.query)}`;
    const retry = this.options.retry;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
      } catch (e) {
        if (attempt < retry.maxRetries) {
          await this.sleep(backoff(retry, attempt));
          continue;
        }
        throw new APIConnectionError(`could not reach Tender at ${this.baseUrl}: ${String(e)}`);
      }
      const parsed = jsonOrNull(await response.text());
      if (response.ok) return parsed as T;
      const error = errorFrom(response.status, parsed);
      if (attempt < retry.maxRetries && error.retryable) {
        const after = retryAfterMs(response.headers.get("retry-after"));
        if (after !== undefined && after > retry.maxRetryAfterMs) throw error;
        await this.sleep(after ?? backoff(retry, attempt));
        continue;
      }
      throw error;
    }
  }
}

function backoff(retry: RetryPolicy, attempt: number): number {
  const base = Math.min(retry.maxBackoffMs, retry.initialBackoffMs * 2 ** attempt);
  return base * (0.5 + Math.random() / 2);
}

function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** Query parameters as the API reads them: nested objects as `created[gte]=…`. */
export function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (typeof value === "object") {
      for (const [sub, v] of Object.entries(value)) params.append(`${key}[${sub}]`, String(v));
    } else {
      params.append(key, String(value));
    }
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** A response body parsed as JSON, or `null` when it is empty or not JSON (an error page). */
function jsonOrNull(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
