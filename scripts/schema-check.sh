#!/usr/bin/env bash
# Every committed file of a kind with a JSON Schema, and every kind of
# output the binary writes (a certified bundle of one column, and the
# `--format json`/`jsonl` output of run, check, list, verify and diff),
# checked by an independent validator, Python's jsonschema, installed
# pinned by hash into a venv under the target folder; then every invalid
# fixture must be rejected. Exits non-zero if any valid file is rejected or
# any invalid fixture accepted. Needs Python 3.11 or later and PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "schema-check: needs Python 3.11 or later (tomllib, and jsonschema's own floor)" >&2
  exit 2
fi
target=${CARGO_TARGET_DIR:-target}
venv="$target/schema-check-venv"
requirements=scripts/schema-requirements.txt
# A venv is kept between runs while the pinned requirements are unchanged.
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$venv/requirements.txt"; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --require-hashes --only-binary :all: -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
conformance() { cargo run --locked -q -p sharedos-conformance-cli -- "$@"; }
conformance certify --column process:python-reference --out "$work/bundle" >/dev/null
conformance verify "$work/bundle" --format json >"$work/verify.json"
conformance diff reports/conformance.json "$work/bundle" --format json >"$work/diff.json"
conformance list --format json >"$work/list.jsonl"
conformance check --case bounded-grant --case replay-freshness --format jsonl >"$work/check.jsonl"
conformance run --column process:python-reference --case bounded-grant --repeat 2 --format json >"$work/run.json"
"$venv/bin/python" scripts/schema-check.py \
  --output "manifest.schema.json=$work/bundle/manifest.json" \
  --output "statement.schema.json=$work/bundle/statement.json" \
  --output "evidence-line.schema.json=$work/bundle/evidence.jsonl" \
  --output "verify-output.schema.json=$work/verify.json" \
  --output "diff-output.schema.json=$work/diff.json" \
  --output "list-line.schema.json=$work/list.jsonl" \
  --output "run-event.schema.json=$work/check.jsonl" \
  --output "run-output.schema.json=$work/run.json"
