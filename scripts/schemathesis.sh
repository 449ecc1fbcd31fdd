#!/usr/bin/env bash
# Runs schemathesis (from PyPI) against a live `tender serve` with the API's own OpenAPI document
# (docs/openapi.json, served at /v2/openapi.json) and a test secret key. Fails on any 5xx, any
# status or response the document does not allow, any undocumented method, and the other checks
# below. Usage: scripts/schemathesis.sh [extra `st run` arguments]
#
# Settings (environment):
#   SCHEMATHESIS_MAX_EXAMPLES  test cases per operation and phase (default 25)
#   SCHEMATHESIS_SEED          the seed (default: a fixed one, so that CI is repeatable; `random`
#                              for a fresh one each run, printed, to explore further)
#   SCHEMATHESIS_CHECKS        checks to run (default below)
#   TENDER_VENV                the Python venv to (re)use (default ~/.cache/tender-venv)
#
# The server and schemathesis run in a fresh network namespace with only a loopback interface
# (`unshare -n`), because schemathesis creates webhook endpoints with URLs of its own invention
# and the webhook worker would otherwise try to deliver to them.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
VENV="${TENDER_VENV:-$HOME/.cache/tender-venv}"
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-25}"
SEED="${SCHEMATHESIS_SEED:-20261121}"
[ "$SEED" = random ] && SEED="$RANDOM$RANDOM"
CHECKS="${SCHEMATHESIS_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection,missing_required_header,unsupported_method,allow_header_conformance,use_after_free,ensure_resource_availability,ignored_auth}"

if [ "${1:-}" != "--inside-namespace" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tender-target}"
  if ! "$VENV/bin/st" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    echo "installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  fi
  cargo build --quiet -p tender --bin tender
  export TENDER_BIN="$CARGO_TARGET_DIR/debug/tender"
  if ! unshare -n true 2>/dev/null; then
    echo "schemathesis.sh: cannot create a network namespace (unshare -n); refusing to let" >&2
    echo "generated webhook URLs be delivered to. Run as root or with CAP_SYS_ADMIN." >&2
    exit 1
  fi
  exec unshare -n bash "$0" --inside-namespace "$@"
fi
shift

# Inside the namespace: loopback only.
ip link set lo up

DATA="$(mktemp -d)"
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
  fi
  rm -rf "$DATA"
}
trap cleanup EXIT

TENDER_LOG=warn "$TENDER_BIN" serve \
  --listen 127.0.0.1:0 --receipt-listen 127.0.0.1:0 --data-dir "$DATA" \
  --rate-limit 0 --webhook-retry-scale 0.001 --bank-settlement-delay 1 \
  >"$DATA/stdout" 2>"$DATA/stderr" &
SERVER=$!

BASE=""
for _ in $(seq 1 300); do
  BASE="$(sed -n 's/^listening on //p' "$DATA/stdout")"
  [ -n "$BASE" ] && break
  if ! kill -0 "$SERVER" 2>/dev/null; then
    echo "tender serve exited:" >&2
    cat "$DATA/stdout" "$DATA/stderr" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$BASE" ]; then
  echo "tender serve did not start listening within 30 s" >&2
  exit 1
fi
KEY="$(sed -n 's/^  test secret key: *//p' "$DATA/stdout")"
if [ -z "$KEY" ]; then
  echo "no test secret key in the server's first-start output" >&2
  exit 1
fi
echo "tender at $BASE; schemathesis $SCHEMATHESIS_VERSION, seed $SEED, $MAX_EXAMPLES examples per operation"

# A body over 64 KiB (413) or a request line over 64 KiB (414, from the HTTP layer) is refused: a
# rejection of bad data too.
cat >"$DATA/schemathesis.toml" <<'TOML'
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "414", "415", "422", "428", "429", "5xx"]

TOML

# Real objects for the operations on `{id}` paths: half of their test cases use one of these ids
# (the other half keep generated ones, which are 404s), so that fuzzed bodies reach live
# payments, customers, refunds, payment methods, events and webhook endpoints.
"$VENV/bin/python" - "$BASE" "$KEY" >>"$DATA/schemathesis.toml" <<'PY'
import json, sys, urllib.request

base, key = sys.argv[1], sys.argv[2]


def call(method, path, body=None):
    req = urllib.request.Request(
        base + "/v2" + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def card(number):
    return {"type": "card", "card": {"number": number, "exp_month": 12, "exp_year": 2040, "cvc": "123"}}


def pay(**body):
    return call("POST", "/payments", body)["id"]


cus = call("POST", "/customers", {"name": "fixture", "email": "fixture@example.com"})["id"]
paid = pay(amount=5000, currency="usd", payment_method=card("4242424242424242"), customer=cus)
pm = call("POST", "/payment_methods", card("4000056655665556"))["id"]
call("POST", "/payment_methods/%s/attach" % pm, {"customer": cus})
ids = {
    "customers": [cus, call("POST", "/customers", {})["id"]],
    "payments": [
        paid,
        pay(amount=2000, currency="eur", capture=False, payment_method=card("5555555555554444")),
        pay(amount=3000, currency="gbp", payment_method=card("4000002500003155")),
    ],
    "refunds": [call("POST", "/refunds", {"payment": paid, "amount": 100})["id"]],
    "payment_methods": [pm, call("POST", "/payment_methods", card("4242424242424242"))["id"]],
    "webhook_endpoints": [
        call("POST", "/webhook_endpoints", {"url": "http://127.0.0.1:9/", "enabled_events": ["*"]})["id"]
    ],
}
ids["events"] = [e["id"] for e in call("GET", "/events?limit=5")["data"]]
for name, values in ids.items():
    print("\n[dictionaries.%s]\nvalues = %s" % (name, json.dumps(values)))
    print('\n[[operations]]\ninclude-path-regex = "/%s/\\\\{id\\\\}"' % name)
    print('parameters = { "path.id" = { dictionary = "%s", probability = 0.5 } }' % name)
PY

HOOKS_DIR="$(pwd)/scripts"
# schemathesis keeps failing cases (for `st replay ID`) under the working directory: not the clone.
WORK="$HOME/.cache/tender-schemathesis"
mkdir -p "$WORK"
cd "$WORK"

status=0
# GET /events/stream never ends (server-sent events): tests/api/events_stream.rs covers it.
# In the stateful phase each request gets an Idempotency-Key of its own (see the hooks file).
SCHEMATHESIS_HOOKS=schemathesis_hooks PYTHONPATH="$HOOKS_DIR" "$VENV/bin/st" --config-file "$DATA/schemathesis.toml" run "$BASE/v2/openapi.json" \
  --header "Authorization: Bearer $KEY" \
  --checks "$CHECKS" \
  --max-examples "$MAX_EXAMPLES" \
  --seed "$SEED" \
  --request-timeout 10 \
  --exclude-operation-id streamEvents \
  --generation-database none \
  --workers 1 \
  --no-color \
  "$@" || status=$?

if ! kill -0 "$SERVER" 2>/dev/null; then
  echo "tender serve died during the run" >&2
  status=1
fi
if grep -q -i "panicked" "$DATA/stderr"; then
  echo "tender serve logged a panic:" >&2
  grep -i -A5 "panicked" "$DATA/stderr" | head -40 >&2
  status=1
fi
exit "$status"
