#!/usr/bin/env bash
# The JUnit files `--junit` writes, validated with xmllint against Maven
# Surefire's 3.0 report schema (harness/conformance/tests/junit/, its
# SHA-256 checked first): a full run's (`check`), a repeated run's
# (`check --repeat 3` on process:python-reference), and a flaky cell's (a
# stand-in runtime whose runs of one cell fail, fail, then pass, on a
# real-clock seat so no golden file is compared), whose run must fail.
# Installs Debian's libxml2-utils when xmllint is missing (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v xmllint >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  install_xmllint() { apt-get install -y --no-install-recommends libxml2-utils; }
  # A fresh image has no package lists; stale ones may name gone versions.
  if ! apt-cache show libxml2-utils >/dev/null 2>&1; then
    apt-get update
  fi
  install_xmllint || { apt-get update && install_xmllint; }
fi
schema=harness/conformance/tests/junit/surefire-test-report-3.0.xsd
echo "bef182efcea4eed21f0e60849c458e3b6408bcd5fd0be547699539fa22312ea3  $schema" | sha256sum --check --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cli() { cargo run --locked -q -p sharedos-conformance-cli -- "$@"; }
cli check --junit "$tmp/full.xml" >/dev/null
cli check --column process:python-reference --repeat 3 --junit "$tmp/repeated.xml" >/dev/null
cat >"$tmp/seat.json" <<SEAT
{"name": "patterned", "label": "Patterned", "description": "fails, fails, then passes one cell",
 "kind": "scripted", "command": "python3", "clock": "real", "passEnv": ["PATH"],
 "args": ["$PWD/harness/process/tests/standins/patterned.py", "ffp"]}
SEAT
status=0
cli check --seat "$tmp/seat.json" --column process:patterned --case bounded-grant --jobs 1 --repeat 3 \
  --junit "$tmp/flaky.xml" >"$tmp/flaky.out" || status=$?
if [ "$status" -ne 1 ] || ! grep -q '<failure message="flaky: 1 of 3 runs passed' "$tmp/flaky.xml"; then
  echo "error: a cell that failed, failed, then passed must fail the run as flaky (exit $status):" >&2
  cat "$tmp/flaky.out" "$tmp/flaky.xml" >&2
  exit 1
fi
for file in full repeated flaky; do
  xmllint --noout --schema "$schema" "$tmp/$file.xml"
done
