#!/usr/bin/env python3
"""The mutation-testing sample and its report (standard library only).

`sample` picks a fixed-seed uniform sample of the mutants cargo-mutants
lists and writes what pins exactly that sample (or one shard of it, or,
with `--rerun`, the survivors not justified as equivalent): a regex of
their names for `--re` and a diff touching only their lines for
`--in-diff`. Once the committed results hold the whole sample, that
sample is kept rather than drawn again from a listing that moved with the
code. `report` folds the outcomes of a run into the committed
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


def committed_sample(size, seed):
    """The committed results' sample, when they hold one of this size and seed."""
    if not os.path.exists(RESULTS):
        return None
    results = load(RESULTS)
    if (results["sample"], results["seed"]) != (size, seed) or len(results["outcomes"]) != size:
        return None
    return sorted(results["outcomes"])


def find_moved(wanted, listed):
    """Each wanted name -> the listed name it is now (same file, column and
    mutation; the nearest line when several match), or None when its code is
    gone. Two wanted names never take the same listed one."""
    by_key = {}
    for name in set(listed):
        by_key.setdefault(moved_key(name), []).append(name)
    found = {}
    for name in wanted:
        _, line = line_of(name)
        candidates = sorted(by_key.get(moved_key(name), []), key=lambda c: (abs(line_of(c)[1] - line), c))
        taken = set(found.values())
        found[name] = next((c for c in candidates if c not in taken), None)
    return found


def sample_command(args):
    listed = [m["name"] for m in load(args.listed)]
    shard = tuple(int(x) for x in args.shard.split("/"))
    if len(shard) != 2 or not 1 <= shard[0] <= shard[1]:
        sys.exit("mutants: --shard takes k/n with 1 <= k <= n, not %s" % args.shard)
    # The committed sample stays the sample: drawing again from a listing
    # that moved with the code would pick other mutants and make the score
    # of a shard run again incomparable with the one committed.
    pinned = committed_sample(args.size, args.seed)
    if pinned is None:
        sample, wanted = pick(listed, args.size, args.seed, shard)
    else:
        sample = pinned
        wanted = [name for i, name in enumerate(sample) if i % shard[1] == shard[0] - 1]
    if args.rerun:
        wanted = survivors_to_rerun()
    moved = find_moved(wanted, listed)
    gone = sorted(name for name, now in moved.items() if now is None)
    if gone:
        print("mutants: %d sampled mutants are no longer listed (their code changed): %s" % (len(gone), ", ".join(gone)))
    renamed = {now: name for name, now in moved.items() if now is not None}
    chosen = sorted(renamed)
    if not chosen:
        sys.exit("mutants: nothing to run" + (": no open survivor is still listed" if args.rerun else ""))
    write(args.map, json.dumps(renamed, indent=2, sort_keys=True) + "\n")
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


def tally(outcomes):
    """Outcome -> how many, for every outcome this report counts."""
    outcomes = list(outcomes)
    return {kind: outcomes.count(kind) for kind in OUTCOMES.values()}


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
    lines += ["", "## Shards run again", "",
              "A shard of the committed sample run again on later code, as a check that the score has not dropped: "
              "its outcomes then, and now (the outcomes above are the latest).", ""]
    shown = lambda counts: ", ".join("%s %d" % (kind, counts[kind]) for kind in OUTCOMES.values())
    lines += table(["Shard", "Before", "After"],
                   [(each["shard"], shown(each["before"]), shown(each["after"])) for each in results.get("rechecks", [])])
    lines += ["", "## Missed at first, caught after new tests", ""]
    lines += table(["Mutant", "What kills it"], [(name, handled.get(name, "")) for name in killed_later])
    return "\n".join(lines) + "\n"


def report_command(args):
    results = load(RESULTS) if os.path.exists(RESULTS) else None
    fresh = {"listed": args.listed, "sample": args.size, "seed": args.seed, "shards": [], "outcomes": {}}
    if results is None or (results["sample"], results["seed"]) != (args.size, args.seed):
        results = fresh
    results["listed"] = args.listed
    # A mutant whose lines moved is recorded under the name it was sampled by;
    # anything run but not sampled (a "delete field" mutant on a sampled line) is left out.
    renamed = load(args.map)
    fresh_outcomes = {renamed[name]: o for name, o in outcomes_of(args.outcomes).items() if name in renamed}
    again = {name: results["outcomes"][name] for name in fresh_outcomes if name in results["outcomes"]}
    if again and args.shard != "rerun":
        results.setdefault("rechecks", []).append(
            {"shard": args.shard, "before": tally(again.values()), "after": tally(fresh_outcomes[n] for n in again)})
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
    report.add_argument("--map", required=True, help="the sample's map: name run -> name sampled")
    for each in (sample, report):
        each.add_argument("--size", type=int, default=200)
        each.add_argument("--seed", type=int, default=18)
        each.add_argument("--shard", default="1/1")
    sample.add_argument("--rerun", action="store_true", help="the open survivors instead of a shard")
    sample.add_argument("--names", required=True)
    sample.add_argument("--map", required=True, help="where to write: name run -> name sampled")
    sample.add_argument("--regex", required=True)
    sample.add_argument("--diff", required=True)
    args = parser.parse_args()
    if args.command == "sample":
        sample_command(args)
    else:
        report_command(args)


if __name__ == "__main__":
    main()
