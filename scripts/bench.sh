#!/usr/bin/env sh
# Runs the conformance harness benchmarks (criterion). Extra arguments go to
# criterion: options such as `--warm-up-time 1 --measurement-time 3`, and a
# filter such as `mediated_call` or `matrix/full`. reports/bench.md says what
# each benchmark measures, and how to count instructions with callgrind
# (the PROFILE_MATRIX, PROFILE_CELL and PROFILE_TURNS workloads).
set -eu
cd "$(dirname "$0")/.."
# Benchmarks build with whole-program LTO (the `release-lto` profile).
exec cargo bench --profile release-lto -p sharedos-conformance -- "$@"
