#!/usr/bin/env bash
# Grades the three pinned vendor CLIs (scripts/vendors.sh installs them)
# over the whole suite against the scripted model, and writes (`run`) or
# checks (`check`) their committed verdicts, reports/vendors.{json,md}.
# `check` fails when any cell's verdict moved; the cells' own failures are
# part of the committed verdicts and fail nothing by themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
case "$mode" in
  run | check) ;;
  *) echo "usage: scripts/vendor-verdicts.sh [run|check]" >&2; exit 2 ;;
esac
args=()
for vendor in codex claude-code pi; do
  args+=(--seat "harness/seats/vendors/$vendor.json" --column "mcp:$vendor")
done
exec cargo run --locked -q -p sharedos-conformance-cli -- "$mode" "${args[@]}" --verdicts reports/vendors.json
