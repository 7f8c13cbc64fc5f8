#!/usr/bin/env python3
"""The mutation-testing sample and its report (standard library only).

`sample` picks a fixed-seed uniform sample of the mutants cargo-mutants
lists and writes what pins exactly that sample (or one shard of it, or,
with `--rerun`, the survivors not justified as equivalent): a regex of
their names for `--re` and a diff touching only their lines for
`--in-diff`. `report` folds the outcomes of a run into the committed
results (`reports/mutants.json`) and renders `reports/mutants.md`; a
survivor that a later run catches is kept as killed after the first run.
"""

import argparse
import json
import math
import os
import random
import re
import sys

RESULTS = "reports/mutants.json"
REPORT = "reports/mutants.md"
HANDLED = "scripts/mutants-survivors.json"

# cargo-mutants' outcome summaries, as this report counts them.
OUTCOMES = {
    "CaughtMutant": "caught",
    "MissedMutant": "missed",
    "Timeout": "timeout",
    "Unviable": "unviable",
}


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write(path, text):
    """Writes under a temporary name, then renames: never a half-written file."""
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)


def pick(names, size, seed, shard):
    """The sample (sorted), then shard k of n of it, round-robin."""
    names = sorted(set(names))
    sample = sorted(random.Random(seed).sample(names, min(size, len(names))))
    k, n = shard
    return sample, [name for i, name in enumerate(sample) if i % n == k - 1]


def line_of(name):
    """`path:line:col: what` -> (path, line)."""
    path, line, _ = name.split(":", 2)
    return path, int(line)


def touching_diff(names):
    """A diff whose added lines are exactly the lines the mutants sit on."""
    by_file = {}
    for name in names:
        path, line = line_of(name)
        by_file.setdefault(path, set()).add(line)
    out = []
    for path in sorted(by_file):
        with open(path, encoding="utf-8") as handle:
            source = handle.read().split("\n")
        out.append("--- a/%s\n+++ b/%s\n" % (path, path))
        for line in sorted(by_file[path]):
            text = source[line - 1]
            out.append("@@ -%d,1 +%d,1 @@\n-%s\n+%s\n" % (line, line, text, text))
    return "".join(out)


def equivalent(handling):
    return handling.startswith("equivalent")


def removed(handling):
    """A survivor in code nothing called, removed with it: no mutant is left to run."""
    return handling.startswith("removed")


def hangs(handling):
    """A timeout looked at and found to spin for ever: its tests can only fail by timing out."""
    return handling.startswith("hangs")


def justified(handling):
    return equivalent(handling) or removed(handling) or hangs(handling)


def moved_key(name):
    """A mutant's name without its line, which moves when code above it does."""
    return re.sub(r":\d+:(\d+):", r":\1:", name, count=1)


def survivors_to_rerun():
    """Mutants of the committed results that were missed or timed out and
    are not justified: a timeout is run again too, since a settle limit or a
    new test may turn it into a catch."""
    results = load(RESULTS)
    handled = load(HANDLED) if os.path.exists(HANDLED) else {}
    return sorted(
        n for n, o in results["outcomes"].items() if o in ("missed", "timeout") and not justified(handled.get(n, ""))
    )


def sample_command(args):
    listed = [m["name"] for m in load(args.listed)]
    shard = tuple(int(x) for x in args.shard.split("/"))
    if len(shard) != 2 or not 1 <= shard[0] <= shard[1]:
        sys.exit("mutants: --shard takes k/n with 1 <= k <= n, not %s" % args.shard)
    sample, chosen = pick(listed, args.size, args.seed, shard)
    if args.rerun:
        # A survivor whose lines moved is found again by its name without them.
        open_keys = {moved_key(name) for name in survivors_to_rerun()}
        chosen = sorted(name for name in set(listed) if moved_key(name) in open_keys)
        if not chosen:
            sys.exit("mutants: no open survivor to run again")
    write(args.names, "".join(name + "\n" for name in chosen))
    write(args.regex, "^(" + "|".join(re.escape(name) for name in chosen) + ")$\n")
    write(args.diff, touching_diff(chosen))
    which = "the open survivors" if args.rerun else "shard %s" % args.shard
    print("mutants: %d listed, a sample of %d (seed %d), %s: %d mutants"
          % (len(set(listed)), len(sample), args.seed, which, len(chosen)))


def outcomes_of(path):
    """Mutant name -> outcome, from a run's outcomes.json."""
    found = {}
    for entry in load(path).get("outcomes", []):
        scenario = entry.get("scenario")
        if not isinstance(scenario, dict) or "Mutant" not in scenario:
            continue
        outcome = OUTCOMES.get(entry.get("summary"))
        if outcome is not None:
            found[scenario["Mutant"]["name"]] = outcome
    return found


def wilson(caught, total, z=1.96):
    """The 95 % Wilson score interval of caught/total."""
    if total == 0:
        return (0.0, 1.0)
    p = caught / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return (max(0.0, centre - half), min(1.0, centre + half))


def table(headers, rows):
    """A Markdown table whose first column is a mutant name; `None.` for no rows."""
    if not rows:
        return ["None."]
    cell = lambda text: text.replace("|", "\\|")
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
    for name, *rest in rows:
        lines.append("| " + " | ".join(["`%s`" % cell(name)] + [cell(text) for text in rest]) + " |")
    return lines


def render(results, handled):
    runs = results["outcomes"]
    counts = {kind: sum(1 for o in runs.values() if o == kind) for kind in OUTCOMES.values()}
    survivors = sorted(n for n, o in runs.items() if o == "missed")
    timed_out = sorted(n for n, o in runs.items() if o == "timeout")
    equivalents = [n for n in survivors if equivalent(handled.get(n, ""))]
    gone = [n for n in survivors if removed(handled.get(n, ""))]
    killed_later = results.get("killedLater", [])
    viable = counts["caught"] + counts["missed"]
    killed = counts["caught"]
    low, high = wilson(killed, viable)
    lines = [
        "# Mutation testing",
        "",
        "`scripts/mutants.sh` mutates the authorization crate, the reference kernel and the envelope "
        "(`sharedos-authz` without its in-memory fixture stores, `sharedos-kernel`, `sharedos-envelope`) "
        "with cargo-mutants and runs the whole workspace's tests against each mutant. A mutant the tests "
        "do not fail is a survivor: a broken kernel the suite would pass.",
        "",
        "- Mutants listed: %d" % results["listed"],
        "- Sample: %d, uniform, seed %d" % (results["sample"], results["seed"]),
        "- Run so far: %d of the sample (shards %s)" % (len(runs), ", ".join(sorted(results["shards"]))),
        "- Caught %d, missed %d, timed out %d, unviable %d" % (
            counts["caught"], counts["missed"], counts["timeout"], counts["unviable"]),
        "- Score: %s (caught of caught and missed; 95 %% Wilson interval %.1f–%.1f %%)" % (
            ("%.1f %%" % (100.0 * killed / viable)) if viable else "n/a", 100 * low, 100 * high),
        "- Survivors justified: %d of %d (%d equivalent, %d in code nothing called, removed with it)" % (
            len(equivalents) + len(gone), len(survivors), len(equivalents), len(gone)),
        "- Missed at first, caught after new tests: %d" % len(killed_later),
        "",
        "A survivor is either justified (equivalent, or in dead code that was removed) or run again (`RERUN=1 scripts/mutants.sh`) once "
        "a test or row meant to kill it exists; the score counts what that run found. A mutant whose "
        "tests ran past the timeout is counted apart, as cargo-mutants does: it is neither caught nor "
        "missed, and each is looked at below.",
        "",
        "## Survivors",
        "",
    ]
    open_survivor = "open: needs a test or row that kills it"
    lines += table(["Mutant", "Outcome", "Handling"],
                   [(name, runs[name], handled.get(name, open_survivor)) for name in survivors])
    lines += ["", "## Timed out", ""]
    lines += table(["Mutant", "What the run showed"],
                   [(name, handled.get(name, "open: not looked at yet")) for name in timed_out])
    lines += ["", "## Missed at first, caught after new tests", ""]
    lines += table(["Mutant", "What kills it"], [(name, handled.get(name, "")) for name in killed_later])
    return "\n".join(lines) + "\n"


def report_command(args):
    results = load(RESULTS) if os.path.exists(RESULTS) else None
    fresh = {"listed": args.listed, "sample": args.size, "seed": args.seed, "shards": [], "outcomes": {}}
    if results is None or (results["sample"], results["seed"]) != (args.size, args.seed):
        results = fresh
    results["listed"] = args.listed
    fresh_outcomes = outcomes_of(args.outcomes)
    if args.names:
        with open(args.names, encoding="utf-8") as handle:
            sampled = set(handle.read().split("\n")) - {""}
        fresh_outcomes = {name: o for name, o in fresh_outcomes.items() if name in sampled}
    # A re-run mutant whose lines moved is recorded under the name it was sampled by.
    earlier = {moved_key(name): name for name in results["outcomes"]}
    fresh_outcomes = {earlier.get(moved_key(name), name): o for name, o in fresh_outcomes.items()}
    killed_later = set(results.get("killedLater", []))
    for name, outcome in fresh_outcomes.items():
        if outcome == "caught" and results["outcomes"].get(name) in ("missed", "timeout"):
            killed_later.add(name)
    results["killedLater"] = sorted(killed_later)
    results["outcomes"].update(fresh_outcomes)
    if args.shard not in results["shards"]:
        results["shards"].append(args.shard)
    results["outcomes"] = dict(sorted(results["outcomes"].items()))
    handled = load(HANDLED) if os.path.exists(HANDLED) else {}
    write(RESULTS, json.dumps(results, indent=2, sort_keys=True) + "\n")
    write(REPORT, render(results, handled))
    print("mutants: %s and %s updated" % (RESULTS, REPORT))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sample = sub.add_parser("sample")
    sample.add_argument("--listed", required=True, help="cargo mutants --list --json output")
    report = sub.add_parser("report")
    report.add_argument("--outcomes", required=True, help="a run's mutants.out/outcomes.json")
    report.add_argument("--listed", type=int, required=True, help="how many mutants were listed")
    report.add_argument("--names", help="keep only these mutants' outcomes (the sampled ones)")
    for each in (sample, report):
        each.add_argument("--size", type=int, default=200)
        each.add_argument("--seed", type=int, default=18)
        each.add_argument("--shard", default="1/1")
    sample.add_argument("--rerun", action="store_true", help="the open survivors instead of a shard")
    sample.add_argument("--names", required=True)
    sample.add_argument("--regex", required=True)
    sample.add_argument("--diff", required=True)
    args = parser.parse_args()
    if args.command == "sample":
        sample_command(args)
    else:
        report_command(args)


if __name__ == "__main__":
    main()
