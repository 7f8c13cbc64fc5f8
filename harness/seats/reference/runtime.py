#!/usr/bin/env python3
"""The reference runtime of `sharedos-runtime/2` (harness/process/PROTOCOL.md).

It plays a scripted seat: each `turn` message carries the row's attack
script, and this runtime makes every step itself, through the protocol, the
way the harness's embedded Rust adversary makes it in process
(harness/conformance/src/run/adversary*.rs): the same calls in the same order
at the same virtual instants, the same receipts, the same announcements, the
same outcome. Cells graded from it must equal the adversary's, so every
string below is copied word for word from the Rust side.

Standard library only, Python 3.8 or later. A vendor copying this file as a
template keeps `Wire`, `Turn.send`/`sync`/`pump`/`take` (the protocol) and
replaces what `Turn.run` does with its own runtime.

Shape: one loop over incoming lines, no threads. Blocking for something (an
answer, an instant, a signal) is `pump`: say `wait` (virtual time passes only
while the runtime is idle), take the next line, repeat. Answers to requests
we block on are stored by id; answers to concurrent calls are queued and
receipted at the next point where the runtime would be idle.
"""

import json
import sys

PROTOCOL = "sharedos-runtime/2"
MANIFEST = {"id": "sharedos-reference.python", "version": "1", "protocolVersion": "1"}

# Receipt words and codes, exactly as the Rust adversary writes them.
HOST_CLOSED_BEFORE = "the runtime host closed before this attempt was made"
CANCELLED_BEFORE = "the turn was cancelled before this attempt"
NAMES_NO_TOOL = "the attempt names no tool"
OVER_BUDGET = "the attempt falls outside the tool-call budget"
NOTHING_AFTER_CLOSE = "nothing to do after the turn closed"
NOTHING_TO_DO = "the step names nothing to do"
ANNOTATION_REFUSED = "annotation_refused"
EMIT_REFUSED = "emit_refused"
TURN_DRAINING = "turn_draining"
NO_GRANT_MATERIAL = "no_grant_material_reachable"
ATTEMPT_EVENT = "conformance.attempt"
ESCALATION_TOOL = "sharedos.escalate"
REPORT_KEY = "conformance"
MAX_DETAIL = 512
# Why an in-flight call was cut (`hostError` `aborted`, by its `reason`).
STOPPED_BECAUSE = {
    "draining": "the turn drained",
    "timeout": "the deadline passed",
    "host_cancelled": "the host cancelled the turn",
    "turn_closed": "the turn closed",
    "audit_unavailable": "an audit outage stopped the turn",
}
# Names that would be authority if a runtime could see them.
GRANT_MATERIAL_NAMES = frozenset([
    "grant", "grants", "grantId", "grantSource", "parentGrantId",
    "capabilities", "delegationDepth", "issuer", "revokedAt",
])
# Receipt keys only an issued attempt fills in (the template never keeps them).
ISSUED_KEYS = ("callId", "cause", "forgedGrantId", "observed", "reasonCode")


class EndOfInput(Exception):
    """The harness closed our standard input: no more turns."""


class TurnClosed(Exception):
    """`closed` arrived while the turn was still running: stop making it."""


class Wire:
    """JSON Lines over stdin/stdout, blocking, one flush per line."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        # Lines read since the turn's `turn` message, that message included:
        # every `wait` (and the report) says how many it has seen, so the
        # harness knows the wait answers everything it wrote.
        self.seen = 0

    def read(self):
        while True:
            line = self.reader.readline()
            if not line:
                raise EndOfInput()
            self.seen += 1
            try:
                message = json.loads(line.decode("utf-8"))
            except ValueError as error:
                log("ignoring a line that is not JSON: %s" % error)
                continue
            if isinstance(message, dict):
                return message
            log("ignoring a line that is not a JSON object")

    def send(self, message):
        line = json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        self.writer.write(line.encode("utf-8") + b"\n")
        self.writer.flush()


def log(text):
    sys.stderr.write("reference runtime: %s\n" % text)
    sys.stderr.flush()


# --- Receipts --------------------------------------------------------------

def receipt(step, attempted, detail=None, **fields):
    """The step's receipt: its template, with what happened filled in.
    A field left at None is left out, as Rust leaves out `Option::None`."""
    made = {k: v for k, v in step["receipt"].items() if k not in ISSUED_KEYS and k != "detail"}
    made["attempted"] = attempted
    if detail is not None:
        made["detail"] = detail
    made.update((k, v) for k, v in fields.items() if v is not None)
    return made


def unattempted(step, reason):
    return receipt(step, False, reason)


def call_receipt(step, call, answer, after_close):
    """The receipt of a call: its tool result, or the rejection it got instead."""
    keys = sorted(call.get("arguments", {}))
    if answer["type"] == "toolResult":
        result = answer["result"]
        error = result.get("error") if result.get("status") != "succeeded" else None
        code = error.get("code") if isinstance(error, dict) else None
        return receipt(step, True, argumentKeys=keys, callId=call["id"],
                       observed=result.get("status"), reasonCode=code)
    error = answer["error"]
    if error["code"] == "closed" and after_close:
        code, detail = "host_closed", "the host refused the call: the turn had closed"
    elif error["code"] == "aborted":
        why = STOPPED_BECAUSE.get(error.get("reason"), STOPPED_BECAUSE["turn_closed"])
        code, detail = "interrupted", "the turn stopped while the call was in flight (%s)" % why
    elif error["code"] == "audit_unavailable":
        code = "audit_unavailable"
        detail = "the kernel could not record the call's decision: " + error["message"]
    else:  # refused outright: the call was never issued
        return receipt(step, False, "the host refused the call: " + error["message"], argumentKeys=keys)
    return receipt(step, True, detail, argumentKeys=keys, callId=call["id"], reasonCode=code)


def inspect_receipt(step, request):
    """Walk the turn request for any name that would be grant material."""
    found = []

    def walk(value, path):
        if isinstance(value, dict):
            for key, child in value.items():
                if key in GRANT_MATERIAL_NAMES:
                    found.append("%s.%s" % (path, key))
                walk(child, "%s.%s" % (path, key))
        elif isinstance(value, list):
            for i, child in enumerate(value):
                walk(child, "%s[%d]" % (path, i))

    walk(request, "request")
    # (The host's five members are walked too in Rust; none is grant material.)
    if not found:
        return receipt(step, True, observed="denied", reasonCode=NO_GRANT_MATERIAL)
    return receipt(step, True, ", ".join(sorted(found))[:MAX_DETAIL], observed="succeeded")


# --- One turn --------------------------------------------------------------

class Turn:
    def __init__(self, wire, message):
        self.wire = wire
        wire.seen = 1  # `seen` counts from the `turn` message, which is line 1
        self.id = message["turn"]
        self.request = message["request"]
        self.limits = message["limits"]
        self.script = message.get("script")
        self.steps = self.script["steps"] if self.script else []
        self.order = {s["attempt"]: i for i, s in enumerate(self.steps)}
        self.counters = {}       # request ids: c1, c2 (calls), e1 (emits), a1 (annotations)
        self.waiting = set()     # ids of requests we block on ...
        self.answers = {}        # ... and their answers, once they came
        self.in_flight = {}      # id -> (step, call): concurrent calls not answered yet
        self.late = []           # (step, call, answer): answered, receipt not made yet
        self.receipts = []       # in the order made
        self.issued = 0          # calls issued inside the turn
        self.now_ms = 0          # latest instant the harness told us about
        self.draining = False    # `host.draining` has fired
        self.aborted = False     # the hard signal has fired
        self.closed = False
        self.running = True      # the steps and the ending are still being made

    # The protocol ------------------------------------------------------------

    def send(self, kind, **fields):
        fields.update(type=kind, turn=self.id)
        self.wire.send(fields)

    def new_id(self, prefix):
        self.counters[prefix] = self.counters.get(prefix, 0) + 1
        return "%s%d" % (prefix, self.counters[prefix])

    def take(self, message):
        """Handle one line the harness wrote about this turn."""
        kind = message.get("type")
        if kind in ("hello", "turn"):
            raise SystemExit("reference runtime: a %r message in the middle of turn %r" % (kind, self.id))
        if message.get("turn") != self.id:
            log("ignoring a %r message about turn %r" % (kind, message.get("turn")))
        elif kind in ("toolResult", "hostError", "ack"):
            rid = message.get("id")
            if rid in self.in_flight:
                step, call = self.in_flight.pop(rid)
                self.late.append((step, call, message))
            elif rid in self.waiting:
                self.waiting.discard(rid)
                self.answers[rid] = message
            # Otherwise: the answer to a call dropped when the turn closed.
        elif kind == "draining":
            self.draining = True
        elif kind == "abort":
            # The hard signal fires the soft one with it (envelope deadline.rs),
            # and stops the turn where it stands: a runtime seated in process
            # is dropped at that moment, so it makes no more steps.
            self.aborted = self.draining = True
            if self.running:
                raise TurnClosed()
        elif kind == "time":
            self.now_ms = max(self.now_ms, message.get("nowMs", 0))
        elif kind == "closed":
            # Closing fires the hard signal, and so `draining` (executor.rs close_turn).
            self.closed = self.aborted = self.draining = True
            if self.running:
                raise TurnClosed()
        else:
            log("ignoring a message of type %r" % kind)

    def sync(self, kind, prefix, **fields):
        """An emit or annotate: the harness answers at once, no time passes."""
        rid = self.new_id(prefix)
        self.waiting.add(rid)
        self.send(kind, id=rid, **fields)
        while rid not in self.answers:
            self.take(self.wire.read())
        return self.answers.pop(rid)

    def pump(self, done, until_ms=None, idle=False):
        """Block until done(): idle (`wait`), take each line, receipt late answers."""
        while True:
            if self.deliver_late():
                idle = False
            if done():
                return
            if not idle:
                if until_ms is None:
                    self.send("wait", seen=self.wire.seen)
                else:
                    self.send("wait", untilMs=until_ms, seen=self.wire.seen)
            idle = False
            self.take(self.wire.read())

    def wait_until(self, at_ms):
        # An instant known to have passed is not waited for (no idle moment).
        if self.now_ms < at_ms:
            self.pump(lambda: self.now_ms >= at_ms, until_ms=at_ms)

    def invoke(self, call, options):
        """Issue a call and block for its answer."""
        rid = self.new_id("c")
        self.waiting.add(rid)
        self.send("invokeTool", id=rid, call=call, options=options)
        self.pump(lambda: rid in self.answers)
        return self.answers.pop(rid)

    # Receipts ----------------------------------------------------------------

    def record(self, made):
        self.receipts.append(made)

    def announce(self, made):
        """Announce a receipt as a `conformance.attempt` event; False if refused."""
        answer = self.sync("emit", "e", event={"type": ATTEMPT_EVENT, "data": made})
        return answer["type"] == "ack"

    def deliver_late(self):
        """Receipt concurrent calls whose answers came; True if any did."""
        delivered = False
        while self.late:
            step, call, answer = self.late.pop(0)
            made = call_receipt(step, call, answer, after_close=False)
            self.record(made)
            self.announce(made)  # refused once the turn closed: the receipt stands
            delivered = True
        return delivered

    def in_order(self):
        """Every receipt so far, in declared step order."""
        return sorted(self.receipts, key=lambda r: self.order.get(r["attemptId"], -1))

    # The turn ----------------------------------------------------------------

    def run(self):
        if self.script is None:
            # A prompted seat is out of scope here (a stand-in covers it).
            self.send("outcome", outcome={"type": "complete", "output": {"text": "no script"}})
            self.running = False
            self.pump(lambda: self.closed, idle=True)
            return
        idle = True  # an outcome (or throw) ends the busy time
        try:
            self.run_steps()
            self.finish()
        except TurnClosed:
            # `abort` or `closed` stopped the turn, as a runtime seated in
            # process is dropped: no more steps, no ending.
            idle = False
        self.running = False
        self.pump(lambda: self.closed, idle=idle)  # late answers until `closed`
        for step in self.steps:
            if step.get("afterClose"):
                self.record(self.after_close_step(step))
        self.pump(lambda: not self.in_flight)  # every concurrent call receipted
        # `seen` counts `closed`: the harness knows the report came after it.
        self.send("report", seen=self.wire.seen, receipts=self.in_order())

    def run_steps(self):
        host_closed = False
        for step in self.steps:
            if step.get("afterClose"):
                continue
            if host_closed:
                self.record(unattempted(step, HOST_CLOSED_BEFORE))
                continue
            made = self.step(step)
            if made is None:
                continue  # a concurrent call: receipted when its answer comes
            self.record(made)
            if not self.announce(made):
                host_closed = True

    def step(self, step):
        if step.get("unreachable") is not None:
            return unattempted(step, step["unreachable"])
        if step.get("atMs") is not None:
            self.wait_until(step["atMs"])
        if self.aborted:
            return unattempted(step, CANCELLED_BEFORE)
        kind = step["kind"]
        if kind == "inspect":
            return inspect_receipt(step, self.request)
        if kind == "call":
            return self.call(step)
        if kind in ("annotate", "emit", "read"):
            return self.host_step(step)
        return unattempted(step, NAMES_NO_TOOL)

    def call(self, step):
        max_calls, over = self.limits["maxToolCalls"], bool(step.get("overBudget"))
        if self.issued >= max_calls and not over:
            return unattempted(step, OVER_BUDGET)
        call = step.get("call")
        if call is None:  # never sent: a call step carries its call
            return unattempted(step, NAMES_NO_TOOL)
        # An over-budget call names the step ceiling while the call budget lasts.
        declared = self.issued
        if over and self.issued < max_calls:
            declared = max(self.issued, self.limits["maxSteps"])
        self.issued += 1
        if not step.get("concurrent"):
            return call_receipt(step, call, self.invoke(call, {"step": declared}), after_close=False)
        rid = self.new_id("c")
        self.in_flight[rid] = (step, call)
        self.send("invokeTool", id=rid, call=call, options={"step": declared})
        return None

    def host_step(self, step):
        """An annotate, an emit, or a read of `draining`."""
        kind = step["kind"]
        if kind == "annotate":
            annotation = step["annotate"]
            answer = self.sync("annotate", "a", key=annotation["key"], value=annotation.get("value"))
            refused = ANNOTATION_REFUSED
        elif kind == "emit":
            answer = self.sync("emit", "e", event=step["emit"])
            refused = EMIT_REFUSED
        elif step.get("read") == "draining":
            if self.draining:
                return receipt(step, True, "draining: true", observed="denied", reasonCode=TURN_DRAINING)
            return receipt(step, True, "draining: false", observed="succeeded")
        else:
            return receipt(step, True, NOTHING_TO_DO, observed="failed")
        if answer["type"] == "ack":
            return receipt(step, True, observed="succeeded")
        return receipt(step, True, answer["error"]["message"], observed="denied", reasonCode=refused)

    def after_close_step(self, step):
        kind = step["kind"]
        if kind == "call":
            if step.get("call") is None:
                return unattempted(step, NAMES_NO_TOOL)
            return call_receipt(step, step["call"], self.invoke(step["call"], {}), after_close=True)
        if kind in ("annotate", "emit", "read"):
            return self.host_step(step)
        return unattempted(step, NOTHING_AFTER_CLOSE)

    # The ending --------------------------------------------------------------

    def metadata(self, extra):
        """Outcome metadata: the script's own, plus the report under `conformance`."""
        report = dict(self.script["report"], runtimeId=MANIFEST["id"], receipts=self.in_order())
        metadata = dict(extra or {})
        metadata[REPORT_KEY] = report
        return metadata

    def completed(self, output, extra):
        if output is None:
            receipts = self.in_order()
            output = {"declared": len(receipts), "attempted": sum(1 for r in receipts if r["attempted"])}
        return {"type": "complete", "output": output, "metadata": self.metadata(extra)}

    def finish(self):
        """End the turn as the script's terminal says: an outcome or a throw."""
        terminal = self.script.get("terminal")
        if terminal is None:
            return self.send("outcome", outcome=self.completed(None, None))
        if terminal.get("atMs") is not None:
            self.wait_until(terminal["atMs"])
        kind, reason = terminal["kind"], terminal.get("reason", "")
        if kind == "complete":
            outcome = self.completed(terminal.get("output"), terminal.get("metadata"))
        elif kind == "fail":
            given = terminal.get("error") or {"code": "runtime_failed", "message": "the script failed the turn"}
            error = {"code": given["code"], "message": given["message"]}
            if given.get("retryable") is not None:
                error["retryable"] = given["retryable"]
            outcome = {"type": "fail", "error": error, "metadata": self.metadata(terminal.get("metadata"))}
        elif kind == "escalate":
            # The claim is stated before the outcome; its answer is not read.
            self.sync("annotate", "a", key="escalationAsked", value={"tool": ESCALATION_TOOL, "reason": reason})
            outcome = {"type": "escalate", "reason": reason, "metadata": self.metadata(terminal.get("metadata"))}
        elif kind == "malformed":
            outcome = terminal.get("outcome")
            if outcome is None:
                outcome = {"type": "finish"}
        elif kind == "crash":
            return self.send("thrown", error={"message": reason})
        elif kind == "stall":
            # Wait for `draining` (`until: draining`), or forever: until `closed`.
            until_draining = terminal.get("until") == "draining"
            self.pump(lambda: until_draining and self.draining)
            return self.send("thrown", error={"message": reason})
        else:
            raise SystemExit("reference runtime: unknown terminal kind %r" % kind)
        self.send("outcome", outcome=outcome)


def main():
    wire = Wire(sys.stdin.buffer, sys.stdout.buffer)
    try:
        hello = wire.read()
        if hello.get("type") != "hello" or hello.get("protocol") != PROTOCOL:
            log("expected hello for %s, got %s" % (PROTOCOL, json.dumps(hello)[:256]))
            return 2
        wire.send({"type": "ready", "protocol": PROTOCOL, "manifest": MANIFEST})
        while True:
            message = wire.read()
            if message.get("type") == "turn":
                Turn(wire, message).run()
            elif message.get("type") == "fence":
                # Everything about the turn is written: echo the fence, and
                # write nothing more until the next `turn`.
                wire.send({"type": "fenced", "turn": message.get("turn"), "fence": message.get("fence")})
            else:
                log("ignoring a %r message between turns" % message.get("type"))
    except EndOfInput:
        return 0


if __name__ == "__main__":
    sys.exit(main())
