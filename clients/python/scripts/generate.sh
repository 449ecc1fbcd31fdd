#!/usr/bin/env bash
# Regenerates tender/models.py (typed dicts of every object and request body) from the OpenAPI
# document. CI runs it and fails if the committed file differs.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
datamodel-codegen \
  --input "$here/../../docs/openapi.json" \
  --input-file-type openapi \
  --output-model-type typing.TypedDict \
  --target-python-version 3.11 \
  --use-schema-description \
  --formatters builtin \
  --disable-timestamp \
  --custom-file-header '# Generated from docs/openapi.json by clients/python/scripts/generate.sh (datamodel-code-generator); do not edit.' \
  --output "$here/tender/models.py"
