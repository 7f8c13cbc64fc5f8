#!/usr/bin/env sh
# Mutation testing of the authorization crate (without its in-memory
# fixture stores), the reference kernel and the envelope: cargo-mutants
# (installed with `cargo install --locked` when absent) tests each mutant
# against the whole workspace's tests.
#
# The default is a fixed-seed uniform sample of SIZE mutants (200, seed
# SEED=18); SHARD=k/n runs one round-robin shard of that sample, so the
# sample can be finished across sessions. Once reports/mutants.json holds
# the whole sample, shards are drawn from it, each mutant found again by
# name when its line moved, so a shard run again on later code is compared
# with its committed outcomes; ALL=1 makes the sample the whole
# list; RERUN=1 runs again every survivor not justified as equivalent (once
# a test meant to kill it exists). Each run folds its outcomes into
# reports/mutants.json and renders reports/mutants.md; how each survivor is
# handled (the test that kills it, or why it is equivalent) is written in
# scripts/mutants-survivors.json.
set -eu
cd "$(dirname "$0")/.."
size="${SIZE:-200}"
seed="${SEED:-18}"
shard="${SHARD:-1/1}"
command -v cargo-mutants >/dev/null 2>&1 || cargo install --locked cargo-mutants
set -- -p sharedos-authz -p sharedos-kernel -p sharedos-envelope --exclude harness/authz/src/memory.rs
out=target/mutants
mkdir -p "$out"
cargo mutants --list --json "$@" > "$out/listed.json"
listed=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$out/listed.json")
if [ "${ALL:-0}" = 1 ]; then size="$listed"; fi
# A re-run samples as shard 1/1 and is reported under the label "rerun".
rerun=""
sampled="$shard"
if [ "${RERUN:-0}" = 1 ]; then rerun="--rerun"; sampled="1/1"; shard="rerun"; fi
python3 scripts/mutants.py sample --listed "$out/listed.json" --size "$size" --seed "$seed" --shard "$sampled" \
    $rerun --names "$out/names.txt" --map "$out/map.json" --regex "$out/regex.txt" --diff "$out/sample.diff"
# The diff pins the sampled lines, the regex the sampled mutants on them.
# Together they select the whole sample, plus any "delete field" mutant on
# a sampled line (cargo-mutants 27 does not apply --re to those): it is run
# but left out of the results.
set -- "$@" --in-diff "$out/sample.diff" --re "$(cat "$out/regex.txt")"
cargo mutants --list "$@" | LC_ALL=C sort > "$out/selected.txt"
missing=$(LC_ALL=C comm -13 "$out/selected.txt" "$out/names.txt")
extra=$(LC_ALL=C comm -23 "$out/selected.txt" "$out/names.txt" | grep -v ': delete field ' || true)
if [ -n "$missing$extra" ]; then
    echo "mutants: the diff and regex do not select the sample; missing: $missing; extra: $extra" >&2
    exit 1
fi
status=0
cargo mutants "$@" --test-workspace=true --output "$out" --no-shuffle --jobs 1 --minimum-test-timeout 300 \
    || status=$?
# 0: every mutant caught; 2: some missed; 3: some timed out. Anything else
# (a baseline that fails, a usage error) is the run's own failure.
case "$status" in
    0 | 2 | 3) ;;
    *) echo "mutants: cargo mutants exited $status" >&2; exit "$status" ;;
esac
python3 scripts/mutants.py report --outcomes "$out/mutants.out/outcomes.json" --map "$out/map.json" \
    --listed "$listed" --size "$size" --seed "$seed" --shard "$shard"
