/** Retries against a misbehaving server on 127.0.0.1 (real HTTP): which answers are retried,
 * one idempotency key for every try of a call, `Retry-After` honoured. */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import { APIConnectionError, APIError, InvalidRequestError, Tender } from "../src/index.js";

type Answer = [number, Record<string, string>, unknown];

async function stub(script: Answer[]): Promise<{ url: string; keys: (string | undefined)[]; close: () => void }> {
  const keys: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      keys.push(req.headers["idempotency-key"] as string | undefined);
      const [status, headers, body] = script.shift()!;
      res.writeHead(status, { ...headers, "Content-Type": "application/json" }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys, close: () => server.close() };
}

const unavailable = { error: { type: "api_error", code: "service_unavailable", message: "failover", request_id: "req_1" } };

function client(url: string, sleeps: number[], maxRetries = 3): Tender {
  const t = new Tender("sk_test_x", { baseUrl: url, retry: { maxRetries } });
  t.transport.sleep = async (ms) => {
    sleeps.push(ms);
  };
  return t;
}

test("503 and 409 are retried with one key, Retry-After honoured", async () => {
  const s = await stub([
    [503, { "Retry-After": "1" }, unavailable],
    [409, {}, { error: { type: "idempotency_error", code: "idempotency_key_in_use", message: "in flight" } }],
    [200, {}, { id: "cus_1", object: "customer" }],
  ]);
  const sleeps: number[] = [];
  const customer = await client(s.url, sleeps).customers.create({ email: "a@example.com" });
  s.close();
  assert.equal(customer.id, "cus_1");
  assert.equal(s.keys.length, 3);
  assert.ok(s.keys[0]);
  assert.equal(new Set(s.keys).size, 1);
  assert.equal(sleeps[0], 1000);
});

test("a bad request is not retried", async () => {
  const s = await stub([[400, {}, { error: { type: "invalid_request_error", code: "parameter_invalid", message: "bad", param: "email" } }]]);
  const sleeps: number[] = [];
  await assert.rejects(client(s.url, sleeps).customers.create({ email: "nope" }), (e: unknown) => e instanceof InvalidRequestError && e.param === "email");
  s.close();
  assert.equal(s.keys.length, 1);
  assert.deepEqual(sleeps, []);
});

test("retries run out with the last error", async () => {
  const s = await stub([[503, {}, unavailable], [503, {}, unavailable], [503, {}, unavailable]]);
  const sleeps: number[] = [];
  await assert.rejects(client(s.url, sleeps, 2).customers.create({ email: "a@example.com" }), (e: unknown) => e instanceof APIError && e.status === 503);
  s.close();
  assert.equal(s.keys.length, 3);
  assert.equal(sleeps.length, 2);
});

test("an unreachable server is a connection error", async () => {
  const s = await stub([]);
  s.close();
  const sleeps: number[] = [];
  await assert.rejects(client(s.url, sleeps, 1).customers.create({ email: "a@example.com" }), APIConnectionError);
  assert.equal(sleeps.length, 1);
});
