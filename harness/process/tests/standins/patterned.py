#!/usr/bin/env python3
"""A runtime whose turns pass and fail in a given pattern, for the tests
of a repeated cell whose runs disagree (`--repeat`):

    patterned.py PATTERN

It is the Python reference runtime (harness/seats/reference/runtime.py),
except that its turns follow PATTERN, a word of `p` and `f` read in turn
and again from its start: on a `p` turn it plays its script as the
reference runtime does; on an `f` turn it makes none of the script's
steps before its ending, so the row's attack goes unexercised. One worker
(`--jobs 1`) running one single-turn cell K times on this seat (its one
process kept for the run, `"process": "per-run"`) gives the runs PATTERN
says: `ffp` gives fail, fail, pass; `pf` gives pass, fail, pass, ...
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "seats", "reference"))

sys.dont_write_bytecode = True  # nothing written beside the reference runtime
import runtime  # found through the path above, so imported after it

PATTERN = sys.argv[1] if len(sys.argv) > 1 else "p"
if not PATTERN or set(PATTERN) - set("pf"):
    raise SystemExit("patterned.py: PATTERN is a word of p and f, not %r" % PATTERN)


class Patterned(runtime.Turn):
    turns = 0

    def run(self):
        plays = PATTERN[Patterned.turns % len(PATTERN)] == "p"
        Patterned.turns += 1
        if not plays:
            self.steps, self.order = [], {}
        super().run()


runtime.Turn = Patterned

if __name__ == "__main__":
    sys.exit(runtime.main())
