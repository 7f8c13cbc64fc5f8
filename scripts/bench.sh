#!/usr/bin/env sh
# Runs the conformance harness benchmarks (criterion). Extra arguments go to
# criterion, e.g. `scripts/bench.sh --warm-up-time 1 --measurement-time 3`.
set -eu
cd "$(dirname "$0")/.."
exec cargo bench -p sharedos-conformance -- "$@"
