#!/usr/bin/env bash
# Runs README.md's "Run it" command, exactly as written, in a clean clone of this repository and
# takes a payment with the test key it prints on first start. CI runs this so the first command a
# new user types can never again build or start the wrong program.
#
# Usage: scripts/readme-run.sh   (uses $CARGO_TARGET_DIR if set, so CI reuses its build cache)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The first ```sh block after "## Run it" is the command a user copies.
cmd="$(awk '/^## Run it/{f=1} f&&/^```sh/{getline; print; exit}' "$repo/README.md")"
[ -n "$cmd" ] || { echo "README.md has no run command under '## Run it'"; exit 1; }
echo "README run command: $cmd"

git clone --quiet --no-hardlinks "$repo" "$work/clone"
cd "$work/clone"
# Free ports instead of the defaults, so a server already on 4242 cannot answer for this one.
export TENDER_LISTEN=127.0.0.1:0 TENDER_RECEIPT_LISTEN=127.0.0.1:0
bash -c "$cmd" >"$work/out" 2>"$work/err" &
server_pid=$!

api=""
for _ in $(seq 1 4500); do  # a cold release build takes minutes (over 6 on 2 cores)
  api="$(sed -n 's/^listening on \(http[^ ]*\)$/\1/p' "$work/out")"
  [ -n "$api" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "the README command exited:"; tail -20 "$work/err"; exit 1; }
  sleep 0.2
done
[ -n "$api" ] || { echo "no 'listening on' line within 15 minutes"; tail -20 "$work/err"; exit 1; }
sk="$(sed -n 's/^ *test secret key: *\(sk_test_[A-Za-z0-9]*\)$/\1/p' "$work/out")"
[ -n "$sk" ] || { echo "first start printed no test secret key:"; cat "$work/out"; exit 1; }

resp="$(curl -sS "$api/v2/payments" -u "$sk:" -H 'Content-Type: application/json' \
  -d '{"amount": 2500, "currency": "usd", "payment_method": {"type": "card", "card":
       {"number": "4242424242424242", "exp_month": 12, "exp_year": 2040, "cvc": "123"}}}')"
echo "$resp" | python3 -c 'import json,sys; p=json.load(sys.stdin); assert p["status"]=="succeeded", p; print("payment", p["id"], p["status"])'
