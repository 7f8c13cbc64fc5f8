#!/usr/bin/env python3
"""Checks the import graph inside each crate of the workspace.

    python3 scripts/module-graph.py [--check] [CRATE_DIR ...]   (default: harness/*)

Two findings, both read from `crate::` and `super::` paths in a crate's
`src/` as text (a path in a comment counts too, which errs on the side of
reporting):

- a circle: files that import one another, directly or through others;
- a back-up import: in a crate whose stages are declared in STAGES below,
  a file of an earlier stage importing a later one (the stages are listed
  in the order data flows through them; a module not listed is outside
  the order and never reported).

Prints every finding, one per line, then a count per crate. With --check,
exits 1 when a finding is not in ALLOWED_BACK_UP (the imports a refactor
has yet to remove) or when an allowed one no longer exists, so the list
only shrinks. Called by `harness/conformance/tests/conformance/module_graph.rs`.
"""
import glob
import os
import re
import sys

# Per crate folder name: its top-level modules, in the order data flows.
STAGES = {
    "grading": ["vocab", "input", "column", "identity", "record", "messaging", "grade", "output", "plan", "assemble"],
    "conformance": ["run", "suite", "certify"],
}

# Back-up imports a refactor has yet to remove (vocabulary types still
# defined in a later stage than their first reader): this list may only
# shrink.
ALLOWED_BACK_UP = set()

PATH = re.compile(r"\b(crate|self|super(?:::super)*)((?:::[A-Za-z_]\w*)*)(?:::\{([^}]*)\})?")


def modules(src):
    """Map each module path (a tuple of names) to the file defining it."""
    found = {}
    for file in glob.glob(os.path.join(src, "**", "*.rs"), recursive=True):
        parts = os.path.relpath(file, src)[: -len(".rs")].split(os.sep)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        found[tuple(parts)] = file
    return found


def here_of(file, src):
    """The module path of `file`, the base `super` is counted from."""
    parts = os.path.relpath(file, src)[: -len(".rs")].split(os.sep)
    if parts in (["lib"], ["main"]):
        return ()
    return tuple(parts[:-1] if parts[-1] == "mod" else parts)


def targets(text, here, known):
    """Every module a path in `text` names, as the longest known prefix."""
    for match in PATH.finditer(text):
        head, tail, group = match.group(1), match.group(2), match.group(3)
        if head == "crate":
            base = ()
        elif head == "self":
            base = here
        else:
            ups = head.count("super")
            base = here[: max(len(here) - ups, 0)]
        stems = [tail]
        if group is not None:
            stems = [tail + "::" + item.strip().split(" as ")[0].split("::")[0] for item in group.split(",") if item.strip()]
        for stem in stems:
            path = base + tuple(p for p in stem.split("::") if p and p != "self")
            for n in range(len(path), 0, -1):
                if path[:n] in known:
                    yield path[:n]
                    break


def circles(edges):
    """Strongly connected groups of two or more nodes (iterative Tarjan)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


def crate_findings(crate_dir):
    src = os.path.join(crate_dir, "src")
    name = os.path.basename(os.path.normpath(crate_dir))
    known = modules(src)
    edges = {}
    for path, file in known.items():
        with open(file, encoding="utf-8") as f:
            text = f.read()
        here = here_of(file, src)
        edges[file] = {known[t] for t in targets(text, here, known) if known[t] != file}
    rel = lambda f: os.path.relpath(f, src)
    found = [("circle", " -> ".join(rel(f) for f in group)) for group in circles(edges)]
    order = STAGES.get(name, [])
    stage_of = lambda f: rel(f).split(os.sep)[0].removesuffix(".rs")
    for file in sorted(edges):
        for target in sorted(edges[file]):
            a, b = stage_of(file), stage_of(target)
            if a in order and b in order and order.index(a) < order.index(b):
                found.append(("back-up", f"{name}: {rel(file)} imports {rel(target)}"))
    return name, found


def main(argv):
    check = "--check" in argv
    dirs = [a for a in argv if a != "--check"] or sorted(glob.glob("harness/*/"))
    unexpected, seen, scanned = 0, set(), set()
    for crate_dir in dirs:
        if not os.path.isdir(os.path.join(crate_dir, "src")):
            continue
        name, found = crate_findings(crate_dir)
        scanned.add(name)
        for kind, what in found:
            allowed = kind == "back-up" and what in ALLOWED_BACK_UP
            seen.add(what)
            unexpected += not allowed
            print(f"{kind}{' (allowed)' if allowed else ''}: {what}")
        circles_n = sum(k == "circle" for k, _ in found)
        print(f"== {name}: {circles_n} circles, {len(found) - circles_n} back-up imports")
    gone = sorted(a for a in ALLOWED_BACK_UP - seen if a.split(":")[0] in scanned)
    for what in gone:
        print(f"allowed but gone (remove it from ALLOWED_BACK_UP): {what}")
    return 1 if check and (unexpected or gone) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
