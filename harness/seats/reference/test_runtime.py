"""Unit tests of the reference runtime, driven through the protocol by a tiny
fake harness. Run from this folder: python3 -m unittest -v test_runtime"""

import json
import os
import select
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TURN = "exec-1"
MANIFEST = {"id": "sharedos-reference.python", "version": "1", "protocolVersion": "1"}
LIMITS = {"maxSteps": 8, "maxToolCalls": 4, "timeoutMs": 120000}
REQUEST = {"executionId": TURN, "context": {"traceId": "trace-1"}, "tools": [{"name": "files.read"}]}
REPORT = {"version": "1", "executionId": TURN, "traceId": "trace-1",
          "visibleTools": ["files.read"], "moveIds": ["forged-grant"]}


def canonical(message):
    return json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def template(attempt, tool="files.read", keys=("path",)):
    """A step's receipt before it is made (as the harness sends it)."""
    made = {"argumentKeys": list(keys), "attemptId": attempt, "attempted": False, "detail": "",
            "expect": {"statuses": ["denied"]}, "kind": "forged_grant", "moveId": "forged-grant",
            "role": "attack", "turn": 1}
    if tool:
        made["tool"] = tool
    return made


def call_step(attempt, **extra):
    call = {"id": "%s.forged-grant.%s" % (TURN, attempt), "tool": "files.read",
            "arguments": {"path": "/etc/x", "grant": {"id": "g"}},
            "traceId": "trace-1", "requestedAt": "2026-01-01T00:00:00Z"}
    step = {"attempt": attempt, "kind": "call", "call": call, "receipt": template(attempt)}
    step.update(extra)
    return step


def host_step(attempt, kind, **extra):
    step = {"attempt": attempt, "kind": kind, "receipt": template(attempt, tool=None, keys=())}
    step.update(extra)
    return step


def made(step, **fields):
    """The receipt the runtime should make: template, detail dropped, fields set."""
    out = {k: v for k, v in step["receipt"].items() if k != "detail"}
    out.update(fields)
    return out


def result(step, status="denied", code="grant_forged"):
    answer = {"callId": step["call"]["id"], "tool": "files.read", "completedAt": "2026-01-01T00:00:00Z",
              "status": status}
    if status == "succeeded":
        answer["output"] = {}
    else:
        answer["error"] = {"code": code, "message": "no"}
    return answer


class FakeHarness:
    def __init__(self, test):
        self.test = test
        self.proc = subprocess.Popen([sys.executable, "runtime.py"], cwd=HERE, bufsize=0,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.sent = 0  # lines written: a `wait` must have seen them all

    def send(self, kind, **fields):
        # Lines written since the turn's `turn` message, it included: what
        # a current `seen` says.
        self.sent = 1 if kind == "turn" else self.sent + 1
        fields["type"] = kind
        if kind not in ("hello", "turn"):
            fields.setdefault("turn", TURN)
        self.proc.stdin.write((json.dumps(fields) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def recv(self, timeout=5.0):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.test.fail("the runtime wrote nothing within %ss" % timeout)
        line = self.proc.stdout.readline()
        if not line:
            self.test.fail("the runtime closed its stdout: %s" % self.proc.stderr.read().decode())
        return line.decode("utf-8").rstrip("\n")

    def expect(self, kind, **fields):
        """The next line is exactly this message, byte for byte."""
        fields["type"] = kind
        if kind != "ready":
            fields.setdefault("turn", TURN)
        if kind in ("wait", "report"):
            fields.setdefault("seen", self.sent)
        line = self.recv()
        self.test.assertEqual(json.loads(line), fields)
        self.test.assertEqual(line, canonical(fields))
        return fields

    def quiet(self):
        """The runtime wrote nothing more (it is idle)."""
        ready, _, _ = select.select([self.proc.stdout], [], [], 0.3)
        self.test.assertFalse(ready, "unexpected: %r" % (ready and self.recv()))

    def start(self):
        self.send("hello", protocol="sharedos-runtime/2",
                  harness={"name": "sharedos-conformance", "version": "0"}, clock="virtual")
        self.expect("ready", protocol="sharedos-runtime/2", manifest=MANIFEST)

    def turn(self, steps, terminal=None, request=REQUEST, limits=LIMITS):
        script = {"id": "forged-grant", "turn": 1, "steps": steps, "report": REPORT}
        if terminal is not None:
            script["terminal"] = terminal
        self.send("turn", turn=TURN, request=request, limits=limits, script=script)

    def announced(self, receipt, answer="ack"):
        """The runtime announces a receipt; the harness answers it."""
        rid = self.recv_emit(receipt)
        if answer == "ack":
            self.send("ack", id=rid)
        else:
            self.send("hostError", id=rid, error={"code": "closed", "message": "use the runtime host: it is closed"})

    def recv_emit(self, receipt):
        line = json.loads(self.recv())
        self.test.assertEqual(line["type"], "emit")
        self.test.assertEqual(line["event"], {"type": "conformance.attempt", "data": receipt})
        return line["id"]

    def close_turn(self, receipts):
        self.send("closed")
        self.expect("report", receipts=receipts)
        self.fence()

    def fence(self, number=1):
        """The harness fences the turn off: the runtime echoes, then is quiet."""
        self.send("fence", fence=number)
        self.expect("fenced", fence=number)
        self.quiet()

    def finish(self):
        self.proc.stdin.close()
        self.test.assertEqual(self.proc.wait(timeout=5), 0)
        self.proc.stdout.close()
        self.proc.stderr.close()


def report(receipts):
    return dict(REPORT, runtimeId=MANIFEST["id"], receipts=receipts)


def complete(receipts, output=None, metadata=None):
    if output is None:
        output = {"declared": len(receipts), "attempted": sum(r["attempted"] for r in receipts)}
    metadata = dict(metadata or {}, conformance=report(receipts))
    return {"type": "complete", "output": output, "metadata": metadata}


class RuntimeTest(unittest.TestCase):
    def setUp(self):
        self.h = FakeHarness(self)
        self.h.start()

    def tearDown(self):
        if self.h.proc.poll() is None:
            self.h.proc.kill()
            self.h.proc.wait()
        for pipe in (self.h.proc.stdin, self.h.proc.stdout, self.h.proc.stderr):
            if not pipe.closed:
                pipe.close()

    def test_one_call_turn(self):
        h, step = self.h, call_step("read")
        h.turn([step])
        h.expect("invokeTool", id="c1", call=step["call"], options={"step": 0})
        h.expect("wait")
        h.send("toolResult", id="c1", result=result(step))
        r = made(step, argumentKeys=["grant", "path"], attempted=True, callId=step["call"]["id"],
                 observed="denied", reasonCode="grant_forged")
        h.expect("emit", id="e1", event={"type": "conformance.attempt", "data": r})
        h.send("ack", id="e1")
        h.expect("outcome", outcome=complete([r]))
        h.quiet()
        h.close_turn([r])
        h.finish()

    def test_concurrent_call_answered_after_the_outcome(self):
        h, call, look = self.h, call_step("slow", concurrent=True), host_step("look", "inspect")
        h.turn([call, look])
        h.expect("invokeTool", id="c1", call=call["call"], options={"step": 0})
        inspected = made(look, attempted=True, observed="denied", reasonCode="no_grant_material_reachable")
        h.announced(inspected)
        h.expect("outcome", outcome=complete([inspected]))
        h.send("hostError", id="c1", error={"code": "aborted", "message": "x", "reason": "timeout"})
        late = made(call, argumentKeys=["grant", "path"], attempted=True, callId=call["call"]["id"],
                    reasonCode="interrupted",
                    detail="the turn stopped while the call was in flight (the deadline passed)")
        h.expect("emit", id="e2", event={"type": "conformance.attempt", "data": late})
        h.send("ack", id="e2")
        h.expect("wait")
        h.close_turn([late, inspected])
        h.finish()

    def test_concurrent_answer_waits_until_the_runtime_is_idle(self):
        h, call, later = self.h, call_step("slow", concurrent=True), call_step("second")
        h.turn([call, later])
        h.expect("invokeTool", id="c1", call=call["call"], options={"step": 0})
        h.expect("invokeTool", id="c2", call=later["call"], options={"step": 1})
        h.expect("wait")
        h.send("toolResult", id="c1", result=result(call, "succeeded"))
        first = made(call, argumentKeys=["grant", "path"], attempted=True, callId=call["call"]["id"],
                     observed="succeeded")
        h.announced(first)
        h.expect("wait")
        h.send("toolResult", id="c2", result=result(later))
        second = made(later, argumentKeys=["grant", "path"], attempted=True, callId=later["call"]["id"],
                      observed="denied", reasonCode="grant_forged")
        h.announced(second)
        h.expect("outcome", outcome=complete([first, second]))
        h.close_turn([first, second])
        h.finish()

    def test_step_at_an_instant_and_a_refused_annotation(self):
        h = self.h
        step = host_step("note", "annotate", atMs=500, annotate={"key": "runtime", "value": 1})
        h.turn([step])
        h.expect("wait", untilMs=500)
        h.send("time", nowMs=500)
        h.expect("annotate", id="a1", key="runtime", value=1)
        h.send("hostError", id="a1", error={"code": "invalid_annotation_key",
                                            "message": 'accept the annotation key "runtime"'})
        r = made(step, attempted=True, observed="denied", reasonCode="annotation_refused",
                 detail='accept the annotation key "runtime"')
        h.announced(r)
        h.expect("outcome", outcome=complete([r]))
        h.close_turn([r])
        h.finish()

    def test_read_draining_after_draining(self):
        h = self.h
        quiet, fired = host_step("before", "read", read="draining"), host_step("after", "read", atMs=900,
                                                                                read="draining")
        h.turn([quiet, fired])
        first = made(quiet, attempted=True, observed="succeeded", detail="draining: false")
        h.announced(first)
        h.expect("wait", untilMs=900)
        h.send("draining", reason="turn_draining")
        h.expect("wait", untilMs=900)  # woken, still waiting for the instant
        h.send("time", nowMs=900)
        second = made(fired, attempted=True, observed="denied", reasonCode="turn_draining",
                      detail="draining: true")
        h.announced(second)
        h.expect("outcome", outcome=complete([first, second]))
        h.close_turn([first, second])
        h.finish()

    def test_an_instant_known_to_have_passed_is_not_waited_for(self):
        h = self.h
        first = host_step("first", "read", atMs=500, read="draining")
        again = host_step("again", "read", atMs=300, read="draining")
        h.turn([first, again])
        h.expect("wait", untilMs=500)
        h.send("time", nowMs=500)
        r1 = made(first, attempted=True, observed="succeeded", detail="draining: false")
        h.announced(r1)
        r2 = made(again, attempted=True, observed="succeeded", detail="draining: false")
        h.announced(r2)  # no `wait {untilMs: 300}` in between, as tokio's sleep_until
        h.expect("outcome", outcome=complete([r1, r2]))
        h.close_turn([r1, r2])
        h.finish()

    def test_escalate(self):
        h = self.h
        h.turn([], terminal={"kind": "escalate", "reason": "ask a human", "metadata": {"k": "v"}})
        h.expect("annotate", id="a1", key="escalationAsked",
                 value={"tool": "sharedos.escalate", "reason": "ask a human"})
        h.send("ack", id="a1")
        h.expect("outcome", outcome={"type": "escalate", "reason": "ask a human",
                                     "metadata": {"k": "v", "conformance": report([])}})
        h.close_turn([])
        h.finish()

    def test_crash(self):
        h = self.h
        h.turn([], terminal={"kind": "crash", "reason": "boom", "atMs": 10})
        h.expect("wait", untilMs=10)
        h.send("time", nowMs=10)
        h.expect("thrown", error={"message": "boom"})
        h.close_turn([])
        h.finish()

    def test_fail_malformed_and_complete_endings(self):
        h = self.h
        h.turn([], terminal={"kind": "fail"})
        h.expect("outcome", outcome={"type": "fail", "metadata": {"conformance": report([])},
                                     "error": {"code": "runtime_failed", "message": "the script failed the turn"}})
        h.close_turn([])
        h.turn([], terminal={"kind": "fail", "error": {"code": "x_y", "message": "m", "retryable": False}})
        h.expect("outcome", outcome={"type": "fail", "metadata": {"conformance": report([])},
                                     "error": {"code": "x_y", "message": "m", "retryable": False}})
        h.close_turn([])
        h.turn([], terminal={"kind": "malformed", "outcome": {"type": "finish", "z": [1]}})
        h.expect("outcome", outcome={"type": "finish", "z": [1]})
        h.close_turn([])
        h.turn([], terminal={"kind": "complete", "output": {"a": 1}, "metadata": {"m": True}})
        h.expect("outcome", outcome=complete([], output={"a": 1}, metadata={"m": True}))
        h.close_turn([])
        h.finish()

    def test_stall_until_draining_and_forever(self):
        h = self.h
        h.turn([], terminal={"kind": "stall", "until": "draining", "reason": "giving up"})
        h.expect("wait")
        h.send("draining", reason="turn_draining")
        h.expect("thrown", error={"message": "giving up"})
        h.close_turn([])
        step = host_step("never", "read", read="draining", afterClose=True)
        h.turn([step], terminal={"kind": "stall"})
        h.expect("wait")
        h.send("abort", reason="timeout")
        h.expect("wait")
        # Closing fires `draining` (in Rust the hard signal forwards to it).
        h.close_turn([made(step, attempted=True, observed="denied", reasonCode="turn_draining",
                           detail="draining: true")])
        h.finish()

    def test_after_close_call(self):
        h, step = self.h, call_step("late", afterClose=True)
        h.turn([step])
        h.expect("outcome", outcome=complete([]))
        h.send("closed")
        h.expect("invokeTool", id="c1", call=step["call"], options={})
        h.expect("wait")
        h.send("hostError", id="c1", error={"code": "closed", "message": "use the runtime host: it is closed"})
        r = made(step, argumentKeys=["grant", "path"], attempted=True, callId=step["call"]["id"],
                 reasonCode="host_closed", detail="the host refused the call: the turn had closed")
        h.expect("report", receipts=[r])
        h.finish()

    def test_refused_announcement_closes_the_host(self):
        h = self.h
        first, second = host_step("one", "emit", emit={"type": "x.y"}), call_step("two")
        h.turn([first, second])
        h.expect("emit", id="e1", event={"type": "x.y"})
        h.send("hostError", id="e1", error={"code": "closed", "message": "use the runtime host: it is closed"})
        r1 = made(first, attempted=True, observed="denied", reasonCode="emit_refused",
                  detail="use the runtime host: it is closed")
        h.announced(r1, answer="closed")
        r2 = made(second, attempted=False, detail="the runtime host closed before this attempt was made")
        h.expect("outcome", outcome=complete([r1, r2]))
        h.close_turn([r1, r2])
        h.finish()

    def test_budget_unreachable_and_inspection(self):
        h = self.h
        limits = dict(LIMITS, maxToolCalls=1, maxSteps=8)
        a, b, c = call_step("a"), call_step("b"), call_step("c", overBudget=True)
        gone = call_step("gone", unreachable="no runtime can make this")
        look = host_step("look", "inspect")
        request = dict(REQUEST, tools=[{"name": "files.read", "grants": [{"issuer": "x"}]}])
        h.turn([a, b, c, gone, look], request=request, limits=limits)
        h.expect("invokeTool", id="c1", call=a["call"], options={"step": 0})
        h.expect("wait")
        h.send("hostError", id="c1", error={"code": "invalid_call", "message": "accept the tool call: bad"})
        ra = made(a, argumentKeys=["grant", "path"], detail="the host refused the call: accept the tool call: bad")
        h.announced(ra)
        rb = made(b, detail="the attempt falls outside the tool-call budget")
        h.announced(rb)
        h.expect("invokeTool", id="c2", call=c["call"], options={"step": 1})
        h.expect("wait")
        h.send("hostError", id="c2", error={"code": "audit_unavailable",
                                            "message": "write a pre-effect audit record: down"})
        rc = made(c, argumentKeys=["grant", "path"], attempted=True, callId=c["call"]["id"],
                  reasonCode="audit_unavailable",
                  detail="the kernel could not record the call's decision: write a pre-effect audit record: down")
        h.announced(rc)
        rg = made(gone, detail="no runtime can make this")
        h.announced(rg)
        rl = made(look, attempted=True, observed="succeeded",
                  detail="request.tools[0].grants, request.tools[0].grants[0].issuer")
        h.announced(rl)
        receipts = [ra, rb, rc, rg, rl]
        h.expect("outcome", outcome=complete(receipts))
        h.close_turn(receipts)
        h.finish()

    def test_abort_stops_the_turn_before_its_next_step(self):
        # A runtime seated in process is dropped when the hard signal
        # fires: no more steps, no ending; it idles until `closed`.
        h, step = self.h, call_step("timed", atMs=200)
        h.turn([step])
        h.expect("wait", untilMs=200)
        h.send("abort", reason="host_cancelled")
        h.expect("wait")
        h.close_turn([])
        h.finish()

    def test_abort_while_waiting_drops_the_rest(self):
        h, first, second = self.h, call_step("first", atMs=100), call_step("second")
        h.turn([first, second])
        h.expect("wait", untilMs=100)
        h.send("abort", reason="timeout")
        h.expect("wait")
        h.close_turn([])
        h.finish()

    def test_turn_without_script(self):
        h = self.h
        h.send("turn", turn=TURN, request=REQUEST, limits=LIMITS)
        h.expect("outcome", outcome={"type": "complete", "output": {"text": "no script"}})
        h.send("closed")
        h.quiet()
        h.fence()
        h.finish()

    def test_a_second_turn_follows_the_fence_on_the_same_process(self):
        # The fence's number is the harness's count, echoed as given; the
        # runtime owes nothing between the echo and the next `turn`.
        h = self.h
        for number in (1, 2):
            h.turn([], terminal={"kind": "stall"})
            h.expect("wait")
            h.send("closed")
            h.expect("report", receipts=[])
            h.fence(number)
        h.finish()


class HandshakeTest(unittest.TestCase):
    def test_wrong_protocol_exits_2(self):
        proc = subprocess.Popen([sys.executable, "runtime.py"], cwd=HERE, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(b'{"type":"hello","protocol":"sharedos-runtime/1"}\n', timeout=5)
        self.assertEqual((proc.returncode, out), (2, b""))
        self.assertIn(b"expected hello for sharedos-runtime/2", err)

    def test_eof_after_ready_exits_0(self):
        proc = subprocess.Popen([sys.executable, "runtime.py"], cwd=HERE, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        hello = {"type": "hello", "protocol": "sharedos-runtime/2", "harness": {"name": "h", "version": "0"},
                 "clock": "virtual"}
        out, _ = proc.communicate((json.dumps(hello) + "\n").encode(), timeout=5)
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(out.decode(), canonical({"type": "ready", "protocol": "sharedos-runtime/2",
                                                  "manifest": MANIFEST}) + "\n")


if __name__ == "__main__":
    unittest.main()
