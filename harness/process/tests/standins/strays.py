#!/usr/bin/env python3
"""The reference runtime, misbehaving on the turns of one row only:

    strays.py ROW after_outcome|after_report|bad_receipt

On a turn whose id names ROW it writes one line too many, right after its
outcome or right after its report (in the same write, so the harness reads
both together), and says so on stderr; or (bad_receipt) reports a receipt
with a key no receipt has. Every other turn is the reference runtime's
own, in the same process.
"""
import os
import sys

sys.dont_write_bytecode = True  # leave nothing behind in the reference runtime's folder
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../seats/reference"))
import runtime  # noqa: E402

ROW, WHEN = sys.argv[1], sys.argv[2]
TRIGGER = {"after_outcome": "outcome", "after_report": "report", "bad_receipt": "report"}[WHEN]
plain_send = runtime.Wire.send


def send(self, message):
    if message.get("type") != TRIGGER or ROW not in message.get("turn", ""):
        return plain_send(self, message)
    if WHEN == "bad_receipt":
        message["receipts"][0]["confidence"] = "high"
        return plain_send(self, message)
    sys.stderr.write("strays: one line too many %s\n" % WHEN)
    sys.stderr.flush()
    line = runtime.json.dumps(message, sort_keys=True, separators=(",", ":"))
    self.writer.write(line.encode("utf-8") + b"\nnot a protocol line\n")
    self.writer.flush()


runtime.Wire.send = send
sys.exit(runtime.main())
