#!/usr/bin/env sh
# Runs every reader's fuzz test (the proptests named `*never_panic*`) at
# CASES generated inputs each (default 100000): the codecs' live readers
# and frame readers, the case, script, seat and baseline readers, the
# runtime protocol's reader, the manifest, bundle, archive and DSSE
# envelope readers, and the MCP server's HTTP gate and stdio framing. Built
# with the `fuzz` profile (optimised, overflow checks and debug assertions
# on). A failure prints the minimal input proptest found; add it as a
# regression test. Figures: reports/fuzz.md.
set -eu
cd "$(dirname "$0")/.."
cases="${CASES:-100000}"
export PROPTEST_CASES="$cases"
for target in "sharedos-drivers drivers" "sharedos-conformance conformance" "sharedos-process process" \
    "sharedos-evidence evidence" "sharedos-mcp mcp"; do
    set -- $target
    echo "== $1: $cases cases per fuzz test"
    start=$(date +%s)
    cargo test --locked --profile fuzz -p "$1" --test "$2" never_panic -- --test-threads 2
    echo "== $1: $(( $(date +%s) - start )) s"
done
