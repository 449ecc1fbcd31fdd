#!/usr/bin/env bash
# The Python client (clients/python): the OpenAPI document generates without a warning with
# openapi-python-client (the most common Python generator) and what it generates type-checks
# under mypy --strict, the client's generated models match docs/openapi.json, it
# type-checks under mypy --strict (the package and its tests, which are the README's flow), and
# its tests pass against a real `tender serve` (built here). The virtualenv is cached outside
# the clone.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tender-target}"
venv="${TENDER_PY_VENV:-$HOME/.cache/tender-py-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade -e 'clients/python[test,generate]'
gen="$(mktemp -d)"
printf 'post_hooks: []\n' > "$gen/config.yml"
out="$(cd "$gen" && "$venv/bin/openapi-python-client" generate --path "$OLDPWD/docs/openapi.json" --meta none --config config.yml 2>&1)"
if grep -qi "warning\|error" <<<"$out"; then echo "$out"; echo "openapi-python-client warns on docs/openapi.json"; exit 1; fi
(cd "$gen" && "$venv/bin/mypy" --strict tender_api_client) \
  || { echo "openapi-python-client's output of docs/openapi.json does not type-check"; exit 1; }
rm -rf "$gen"
PATH="$venv/bin:$PATH" clients/python/scripts/generate.sh
git diff --exit-code -- clients/python/tender/models.py \
  || { echo "clients/python/tender/models.py is stale: run clients/python/scripts/generate.sh"; exit 1; }
(cd clients/python && "$venv/bin/mypy" tender tests)
cargo build --quiet -p tender
(cd clients/python && TENDER_BIN="$CARGO_TARGET_DIR/debug/tender" "$venv/bin/pytest" -q)
