/** A real `tender serve` on a fresh SQLite data dir and free ports: `$TENDER_BIN`, else
 * `target/debug/tender` under the repository. */

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export interface Server {
  baseUrl: string;
  secretKey: string;
  stop: () => void;
}

export async function startServer(): Promise<Server> {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
  const binary = process.env.TENDER_BIN ?? join(repo, "target", "debug", "tender");
  const data = mkdtempSync(join(tmpdir(), "tender-ts-"));
  const child: ChildProcess = spawn(
    binary,
    ["serve", "--listen", "127.0.0.1:0", "--receipt-listen", "127.0.0.1:0", "--rate-limit", "0", "--data-dir", data],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  let baseUrl = "";
  let secretKey = "";
  const lines = createInterface({ input: child.stdout! });
  for await (const raw of lines) {
    const line = raw.trim();
    if (line.startsWith("listening on ")) baseUrl = line.slice("listening on ".length);
    else if (line.startsWith("test secret key:")) secretKey = line.split(":")[1]!.trim();
    else if (line.startsWith("receipts on ")) break;
  }
  if (!baseUrl || !secretKey) throw new Error("tender serve did not print its address and test key");
  return {
    baseUrl,
    secretKey,
    stop: () => {
      child.kill();
      rmSync(data, { recursive: true, force: true });
    },
  };
}
