#!/usr/bin/env python3
"""Trains a zstd dictionary for Tender's stored documents (crates/tender-store/src/body.rs).

    scripts/train-dictionary.py DATABASE.sqlite3 OUT.zdict --dict-id N [--current OLD.zdict]

Reads the `body` of every row of every document table of a Tender SQLite database (stored
bodies, not API answers: the dictionary must match what is stored), at most 600 per table so
that no one kind of document crowds out the others, and trains a 16 KiB dictionary with the
`zstd` command-line tool (`zstd --train`). Bodies already stored as zstd frames are decoded
with `--current`, the dictionary they were written with.

The database should hold every kind of document: run a server with short delays
(`tender serve --bank-settlement-delay 1 --balance-available-delay 1`), `tender trigger` every
event type a few times, and add a few hundred varied payments, customers and refunds.

A dictionary that has stored anything is part of the storage format forever: a new one gets a
new `--dict-id` and is added beside the old ones, never in their place (docs/performance.md).
"""
import argparse
import pathlib
import sqlite3
import subprocess
import tempfile

PER_TABLE = 600
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("database")
    ap.add_argument("out")
    ap.add_argument("--dict-id", type=int, required=True)
    ap.add_argument("--current", help="the dictionary existing frames were written with")
    ap.add_argument("--size", type=int, default=16384)
    args = ap.parse_args()

    db = sqlite3.connect(args.database)
    tables = [
        name
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if name != "idempotency_keys"  # sealed answers: ciphertext, nothing to learn
        and any(col[1] == "body" for col in db.execute(f"PRAGMA table_info({name})"))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        n = 0
        for table in tables:
            rows = db.execute(f"SELECT body FROM {table} ORDER BY random() LIMIT {PER_TABLE}")
            for (body,) in rows:
                raw = body.encode() if isinstance(body, str) else bytes(body)
                if raw.startswith(ZSTD_MAGIC):
                    if not args.current:
                        raise SystemExit(f"{table} holds zstd frames: pass --current")
                    raw = subprocess.run(
                        ["zstd", "-d", "-q", "-c", "-D", args.current],
                        input=raw, capture_output=True, check=True,
                    ).stdout
                pathlib.Path(tmp, f"{table}-{n}").write_bytes(raw)
                n += 1
            print(f"{table}: sampled")
        subprocess.run(
            ["zstd", "--train", "-q", f"--maxdict={args.size}", f"--dictID={args.dict_id}",
             "-o", args.out, *map(str, pathlib.Path(tmp).iterdir())],
            check=True,
        )
        print(f"{n} samples -> {args.out}")


if __name__ == "__main__":
    main()
