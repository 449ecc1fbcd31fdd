#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a short while (CI) or as long as you like.
#
#   scripts/fuzz-short.sh            # 15 s per target
#   scripts/fuzz-short.sh 600        # 10 min per target
#   scripts/fuzz-short.sh 60 iban    # one target
#
# cargo-fuzz builds with -Zsanitizer=address, a nightly flag; RUSTC_BOOTSTRAP=1 lets the stable
# compiler accept it. The corpus grows in $FUZZ_CORPUS_DIR (default ~/.cache/tender-fuzz-corpus,
# so consecutive runs on one machine build on each other), seeded from fuzz/seeds. A crash
# fails the script and leaves its input in fuzz/artifacts/<target>/; reproduce it with
# `RUSTC_BOOTSTRAP=1 cargo fuzz run <target> fuzz/artifacts/<target>/<file>`.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET="${1:-15}"
shift || true
CARGO_FUZZ_VERSION=0.13.2
export RUSTC_BOOTSTRAP=1
# Its own target dir: sanitizer builds share nothing with the workspace's.
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$HOME/.cache/tender-fuzz-target}"
CORPUS_ROOT="${FUZZ_CORPUS_DIR:-$HOME/.cache/tender-fuzz-corpus}"

if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
  echo "installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi

targets=("$@")
[ ${#targets[@]} -eq 0 ] && mapfile -t targets < <(cargo fuzz list)

# Release build with debug assertions and overflow checks (cargo-fuzz's default).
cargo fuzz build

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
  corpus="$CORPUS_ROOT/$t"
  mkdir -p "$corpus"
  dict=()
  [ -f "fuzz/dicts/$t.dict" ] && dict=("-dict=fuzz/dicts/$t.dict")
  echo "== fuzz $t (${SECONDS_PER_TARGET}s)"
  status=0
  cargo fuzz run "$t" "$corpus" "fuzz/seeds/$t" -- \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "${dict[@]}" >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 80 "$log" >&2
    echo "fuzz target $t failed (exit $status); the input is in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  grep -E "^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)" "$log" || true
  echo "corpus: $(find "$corpus" -type f | wc -l) inputs"
done
