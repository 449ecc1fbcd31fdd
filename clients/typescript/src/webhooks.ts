/**
 * Webhook verification, both schemes Tender signs with (docs/api.md, "Signatures"):
 * `Tender-Signature: t=…,v1=…` (hex HMAC-SHA256 of `"{t}.{raw body}"` keyed with the whole
 * `whsec_…` secret) and Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,…`: base64 HMAC-SHA256 of `"{id}.{timestamp}.{raw body}"` keyed with
 * the base64-decoded secret after `whsec_`). Both compare in constant time, accept any of
 * several signatures (a secret being rolled), and refuse a timestamp further than `tolerance`
 * seconds from now.
 */

import { createHmac, timingSafeEqual } from "node:crypto";

import type { components } from "./schema.js";

export const DEFAULT_TOLERANCE = 300;

export class SignatureVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SignatureVerificationError";
  }
}

export interface VerifyOptions {
  /** Seconds the timestamp may be from now. Default 300. */
  tolerance?: number;
  /** Now, in Unix seconds (for tests). */
  now?: number;
}

type Event = components["schemas"]["Event"];

/** Verifies `Tender-Signature` over the raw body and returns the event. */
export function constructEvent(payload: string | Buffer, header: string, secret: string, options: VerifyOptions = {}): Event {
  const raw = typeof payload === "string" ? Buffer.from(payload) : payload;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const [key, value = ""] = part.trim().split("=", 2);
    if (key === "t") timestamp = parseTimestamp(value);
    else if (key === "v1") signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new SignatureVerificationError("no t= timestamp or no v1= signature in the header");
  }
  checkTime(timestamp, options);
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(raw).digest("hex");
  if (!signatures.some((s) => equal(expected, s))) {
    throw new SignatureVerificationError("no signature matches this secret");
  }
  return parse(raw);
}

/** Verifies the Standard Webhooks headers (any case) over the raw body and returns the event. */
export function constructEventStandard(
  payload: string | Buffer,
  headers: Record<string, string | string[] | undefined> | Headers,
  secret: string,
  options: VerifyOptions = {},
): Event {
  const raw = typeof payload === "string" ? Buffer.from(payload) : payload;
  const get = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    for (const [k, v] of Object.entries(headers)) {
      if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : v;
    }
    return undefined;
  };
  const id = get("webhook-id");
  const stamp = get("webhook-timestamp");
  const header = get("webhook-signature");
  if (!id || !stamp || !header) {
    throw new SignatureVerificationError("webhook-id, webhook-timestamp or webhook-signature missing");
  }
  const timestamp = parseTimestamp(stamp);
  checkTime(timestamp, options);
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(raw).digest("base64");
  const candidates = header
    .split(" ")
    .filter((s) => s.startsWith("v1,"))
    .map((s) => s.slice(3));
  if (!candidates.some((s) => equal(expected, s))) {
    throw new SignatureVerificationError("no signature matches this secret");
  }
  return parse(raw);
}

function parseTimestamp(value: string): number {
  if (!/^\d+$/.test(value)) throw new SignatureVerificationError("the timestamp is not a number");
  return Number(value);
}

function checkTime(timestamp: number, options: VerifyOptions): void {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) {
    throw new SignatureVerificationError(`timestamp ${timestamp} is more than ${tolerance} s from now (${now})`);
  }
}

/** Constant-time comparison of two strings (false at once for different lengths). */
function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function parse(raw: Buffer): Event {
  try {
    return JSON.parse(raw.toString("utf8")) as Event;
  } catch {
    throw new SignatureVerificationError("the payload is not JSON");
  }
}
