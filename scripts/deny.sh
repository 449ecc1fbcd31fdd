#!/usr/bin/env bash
# cargo-deny: licence allow-list, bans and sources of every dependency (deny.toml).
#
# Advisories (the RustSec database) are not checked here: the database is a git repository on
# GitHub and the CI machine reaches package registries only. Where GitHub is reachable, run
# `cargo deny check advisories` as well (or `scripts/deny.sh advisories licenses bans sources`).
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_DENY_VERSION=0.20.2
if ! cargo deny --version 2>/dev/null | grep -q "$CARGO_DENY_VERSION"; then
  echo "installing cargo-deny $CARGO_DENY_VERSION"
  cargo install --locked cargo-deny --version "$CARGO_DENY_VERSION"
fi

# cargo deny reads the metadata of every platform's dependencies (Windows ones included), which
# a Linux build never downloads: fetch them first so that --offline below finds them.
cargo fetch --locked --quiet

checks=("$@")
[ ${#checks[@]} -eq 0 ] && checks=(licenses bans sources)
# --offline for the licence, ban and source checks: Cargo.lock and the registry cache suffice.
offline=(--offline)
for c in "${checks[@]}"; do [ "$c" = advisories ] && offline=(); done
cargo deny "${offline[@]}" --log-level error check "${checks[@]}"
