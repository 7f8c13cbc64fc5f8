#!/usr/bin/env python3
"""Every file of a kind the project publishes a JSON Schema for, checked by
an independent validator (Python's `jsonschema`, draft 2020-12): the
committed reports, cases, adversary scripts and seat files, the examples
the documents show (the protocol's messages, a baseline), and the outputs
scripts/schema-check.sh writes (a certified bundle, and each command's
`--format json` or `jsonl` output); then every invalid fixture
(`harness/metadata/tests/fixtures/invalid/`) must be rejected at the place
it names and nowhere else.

    schema-check.py [--output SCHEMA=FILE]...

A FILE ending in `.jsonl` is JSON Lines, each line checked. Prints how many
files (and lines) of each kind it checked; exits 1 when a valid file is
rejected, an invalid fixture accepted (or rejected elsewhere than it says),
a schema is not itself valid, or a schema has no invalid fixture.
"""

import argparse
import json
import pathlib
import sys
import tomllib

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

ROOT = pathlib.Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "harness/metadata/schemas"
BESIDE = ["cases/case.schema.json", "adversaries/adversary.schema.json", "harness/seats/seat.schema.json"]
FIXTURES = ROOT / "harness/metadata/tests/fixtures/invalid"


def load_schemas():
    """Every schema by file name, and a registry that resolves their `$id`s."""
    paths = sorted(PUBLISHED.glob("*.schema.json")) + [ROOT / p for p in BESIDE]
    schemas = {p.name: json.loads(p.read_text()) for p in paths}
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values()
    )
    return schemas, registry


def json_files(folder):
    """The `*.json` files below `folder`, schemas and installed packages aside."""
    return sorted(
        p
        for p in (ROOT / folder).rglob("*.json")
        if not p.name.endswith(".schema.json") and "node_modules" not in p.parts
    )


def fenced(path, info):
    """The bodies of the fenced blocks of `path` whose info string is `info`."""
    blocks, body = [], None
    for line in path.read_text().splitlines():
        if body is None and line == "```" + info:
            body = []
        elif body is not None and line == "```":
            blocks.append("\n".join(body))
            body = None
        elif body is not None:
            body.append(line)
    return blocks


def committed():
    """(schema, where, documents) for every committed file of a kind with a
    schema, and every example of one in the documents."""
    kinds = [
        ("manifest.schema.json", sorted((ROOT / "reports").glob("*.json"))),
        ("case.schema.json", json_files("cases")),
        ("adversary.schema.json", json_files("adversaries")),
        ("seat.schema.json", json_files("harness/seats")),
    ]
    # reports/mutants.json is the mutation-testing script's, not a manifest.
    found = [(s, f, documents(f)) for s, files in kinds for f in files if f.name != "mutants.json"]
    protocol = ROOT / "harness/process/PROTOCOL.md"
    for side in ["harness", "runtime"]:
        examples = [json.loads(block) for block in fenced(protocol, "json " + side)]
        found.append((f"{side}-message.schema.json", protocol, examples))
    baseline = ROOT / "docs/maintainers/known-failures.md"
    found.append(("baseline.schema.json", baseline, [tomllib.loads(b) for b in fenced(baseline, "toml")]))
    return found


def documents(path):
    """The documents of a file: one, or one per line of a `.jsonl` file."""
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def pointer(error):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)


def check_valid(validators, found, counts, failures):
    for schema, path, docs in found:
        if not docs:
            failures.append(f"{path}: no document of {schema} found")
        files, lines = counts.get(schema, (0, 0))
        counts[schema] = (files + 1, lines + len(docs))
        for n, doc in enumerate(docs, 1):
            for error in validators[schema].iter_errors(doc):
                where = f"{path}" + (f" document {n}" if len(docs) > 1 else "")
                failures.append(f"{where}: rejected by {schema} at {pointer(error)!r}: {error.message[:300]}")


def check_invalid(validators, failures):
    covered = {}
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text())
        schema, at = fixture["schema"], fixture["at"]
        places = [pointer(e) for e in validators[schema].iter_errors(fixture["document"])]
        if not places:
            failures.append(f"{path.name}: accepted by {schema} ({fixture['why']})")
        elif at not in places or not all(p.startswith(at) for p in places):
            failures.append(f"{path.name}: expected an error at {at!r} and none elsewhere, got {places}")
        covered[schema] = covered.get(schema, 0) + 1
    for schema in validators:
        if schema not in covered:
            failures.append(f"{schema}: no invalid fixture")
    return covered


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", action="append", default=[], metavar="SCHEMA=FILE")
    args = parser.parse_args()
    schemas, registry = load_schemas()
    failures = []
    for name, schema in schemas.items():
        for error in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
            failures.append(f"{name} is not a valid draft 2020-12 schema: {error.message[:300]}")
    validators = {name: Draft202012Validator(s, registry=registry) for name, s in schemas.items()}
    outputs = []
    for given in args.output:
        schema, _, file = given.partition("=")
        if schema not in validators:
            parser.error(f"no schema {schema}")
        outputs.append((schema, pathlib.Path(file), documents(pathlib.Path(file))))
    counts = {}
    check_valid(validators, committed(), counts, failures)
    committed_counts = dict(counts)
    check_valid(validators, outputs, counts, failures)
    covered = check_invalid(validators, failures)
    for name in schemas:
        files, lines = counts.get(name, (0, 0))
        mine = committed_counts.get(name, (0, 0))[0]
        print(
            f"{name:28} {mine:4} committed  {files - mine:2} written ({lines:5} documents)"
            f"  {covered.get(name, 0)} invalid fixtures"
        )
    for failure in failures:
        print(f"FAIL {failure}")
    print(f"schema-check: {'failed' if failures else 'passed'}, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
