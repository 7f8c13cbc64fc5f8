#!/usr/bin/env python3
"""A stand-in runtime for the process seat's tests: one mode per way a
runtime can behave, or misbehave, under sharedos-runtime/2.

    standin.py MODE [FILE]

Every mode answers `hello` with `ready` (unless the mode is about the
handshake) and then handles each `turn` as the mode says.
"""
import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "complete"


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def raw(text):
    sys.stdout.write(text)
    sys.stdout.flush()


SEEN = 0


def read():
    global SEEN
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    SEEN += 1
    return json.loads(line)


def wait(turn_id, **fields):
    send(dict(type="wait", turn=turn_id, seen=SEEN, **fields))


READ_POLICY = {"path": ["Workspace", "policy.md"]}


def call(turn, call_id):
    return {"id": call_id, "tool": "files.read", "arguments": READ_POLICY,
            "traceId": turn["request"]["context"]["traceId"],
            "requestedAt": turn["request"]["context"]["now"]}


def complete(turn_id, output):
    send({"type": "outcome", "turn": turn_id, "outcome": {"type": "complete", "output": output}})


def main():
    hello = read()
    if MODE == "exits_on_hello":
        sys.stderr.write("no hello for me\n")
        sys.exit(4)
    if MODE == "previous_version":
        send({"type": "ready", "protocol": "sharedos-runtime/1", "manifest": manifest()})
        time.sleep(5)
        return
    if MODE == "never_ready":
        time.sleep(30)
        return
    if MODE == "protocol_mismatch":
        send({"type": "ready", "protocol": "sharedos-runtime/0", "manifest": manifest()})
        return
    if MODE == "manifest_version_mismatch":
        send({"type": "ready", "protocol": hello["protocol"], "manifest": dict(manifest(), protocolVersion="2")})
        return
    send({"type": "ready", "protocol": hello["protocol"], "manifest": manifest()})
    if MODE == "deaf":
        time.sleep(30)  # never reads its input again
        return
    while True:
        message = read()
        if message["type"] == "turn":
            turn(message)
        elif message["type"] == "closed" and MODE == "never_reports":
            wait(message["turn"])
        elif message["type"] == "closed" and MODE in AFTER_CLOSED:
            AFTER_CLOSED[MODE](message["turn"])
        elif MODE == "emits_after_outcome":
            READ.append(message["type"])
            if message["type"] == "fence":
                send({"type": "fenced", "turn": message["turn"], "fence": message["fence"]})
        elif message["type"] == "fence" and MODE != "never_fences":
            echoed = message["fence"] + (1 if MODE == "fences_wrong" else 0)
            send({"type": "fenced", "turn": message["turn"], "fence": echoed})
            FENCES.append(echoed)
            if MODE == "exits_after_fence":
                sys.exit(0)


def report_line(turn_id):
    return json.dumps({"type": "report", "turn": turn_id, "seen": SEEN, "receipts": []}) + "\n"


def later(turn_id, text):
    """The report, then after 300 ms, in a write of its own, `text`."""
    raw(report_line(turn_id))
    time.sleep(0.3)
    raw(text)


# Scripted modes: what each writes once the turn is closed. Two lines go
# out in one write, so the harness reads them together.
AFTER_CLOSED = {
    "reports": lambda t: raw(report_line(t)),
    "never_fences": lambda t: raw(report_line(t)),
    "fences_wrong": lambda t: raw(report_line(t)),
    # A line after the report in a write of its own, 300 ms later.
    "stray_later": lambda t: later(t, "one line too many\n"),
    # The report twice, the second in a write of its own, 300 ms later.
    "report_twice": lambda t: later(t, report_line(t)),
    # The normal report, after one already sent before `closed`.
    "report_before_closed": lambda t: raw(report_line(t)),
    "report_before_closed_later": lambda t: raw(report_line(t)),
    "second_outcome": lambda t: raw(report_line(t)),
    "stray_after_outcome": lambda t: raw(report_line(t)),
    "stray_after_report": lambda t: (sys.stderr.write("about to say too much\n"), sys.stderr.flush(),
                                     raw(report_line(t) + "one line too many\n")),
    # Reports, then exits before the fence.
    "exits_after_report": lambda t: (raw(report_line(t)), sys.exit(0)),
    # Reports, echoes the fence, then exits between turns.
    "exits_after_fence": lambda t: raw(report_line(t)),
    "counts_fences": lambda t: raw(report_line(t)),
    # A report that says it read more lines than the harness wrote.
    "report_seen_ahead": lambda t: send({"type": "report", "turn": t, "seen": SEEN + 5, "receipts": []}),
    # Noisy on stderr every turn; strays after its second report only.
    "noisy_strays": lambda t: raw(report_line(t) + ("one line too many\n" if TURNS == 2 else "")),
}
TURNS = 0
FENCES = []
READ = []  # what the runtime read between its turns (emits_after_outcome)


def manifest():
    return {"id": "standin." + MODE, "version": "1", "protocolVersion": "1"}


def double_fork(pid_file):
    import signal
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            with open(pid_file + ".partial", "w") as out:
                out.write("%d\n" % os.getpid())
            os.rename(pid_file + ".partial", pid_file)
            time.sleep(300)
            os._exit(0)
        os._exit(0)
    while not os.path.exists(pid_file):
        time.sleep(0.01)


def turn(message):
    global SEEN
    SEEN = 1  # seen counts from the turn message
    t = message["turn"]
    if MODE == "environment":
        complete(t, {"variables": sorted(os.environ)})
    elif MODE == "with_a_child":
        import subprocess
        child = subprocess.Popen(["sleep", "30"])  # in the runtime's process group
        complete(t, {"child": child.pid})
    elif MODE == "affinity":
        complete(t, {"cpus": sorted(os.sched_getaffinity(0))})
    elif MODE == "counts_fences":
        complete(t, {"fences": len(FENCES)})
    elif MODE == "emits_after_outcome":
        # What it read since its last turn, then an emit 300 ms after its
        # outcome, which the harness reads after it fenced the turn.
        complete(t, {"read": list(READ)})
        READ.clear()
        time.sleep(0.3)
        send({"type": "emit", "turn": t, "id": "late", "event": {"type": "x"}})
    elif MODE in ("complete", "never_reports", "reports", "stray_after_report", "exits_after_report",
                  "exits_after_fence", "report_seen_ahead",
                  "never_fences", "fences_wrong", "stray_later", "report_twice"):
        complete(t, {"done": True})
    elif MODE == "report_before_closed":
        # A report in the very write of the outcome: read before `closed`.
        raw(json.dumps({"type": "outcome", "turn": t, "outcome": {"type": "complete", "output": None}}) + "\n"
            + report_line(t))
    elif MODE == "report_before_closed_later":
        # The same report 300 ms later: read after `closed` was written.
        complete(t, {"done": True})
        time.sleep(0.3)
        raw(report_line(t))
    elif MODE == "noisy_strays":
        global TURNS
        TURNS += 1
        sys.stderr.write("noise of turn %d\n" % TURNS)
        sys.stderr.flush()
        complete(t, {"done": True})
    elif MODE == "second_outcome":
        complete(t, {"done": True})
        complete(t, {"done": "again"})
    elif MODE == "stray_after_outcome":
        complete(t, {"done": True})
        raw("a stray line after the outcome\n")
    elif MODE == "seen_ahead":
        send({"type": "wait", "turn": t, "seen": SEEN + 5})
    elif MODE == "seen_behind":
        # Counts lines from the turn message, not from hello: every wait is stale.
        send({"type": "invokeTool", "turn": t, "id": "c1", "call": call(message, "c1")})
        wait_behind = dict(type="wait", turn=t, seen=SEEN - 1)
        send(wait_behind)
        time.sleep(30)
    elif MODE == "busy_then_complete":
        # Works for 300 ms of real time against a 100 ms virtual deadline:
        # the paused clock must not move while it works.
        time.sleep(0.3)
        complete(t, {"done": True})
    elif MODE == "wait_then_call":
        wait(t, untilMs=5000)
        answer = read()
        assert answer["type"] == "time", answer
        send({"type": "invokeTool", "turn": t, "id": "c1", "call": call(message, "c1")})
        wait(t)
        answer = read()
        assert answer["type"] == "toolResult", answer
        complete(t, {"at": answer["result"]["status"]})
    elif MODE == "calls":
        # The call benchmark: reads one after another (as many as the
        # second argument says), timing the runtime's own busy time, from
        # the moment a line arrived (parsing it is the runtime's time) to
        # its next wait.
        busy = 0.0
        started = time.perf_counter()
        for i in range(int(sys.argv[2])):
            send({"type": "invokeTool", "turn": t, "id": "c%d" % i, "call": call(message, "c%d" % i)})
            wait(t)
            busy += time.perf_counter() - started
            line = sys.stdin.readline()
            started = time.perf_counter()
            SEEN += 1
            answer = json.loads(line)
            assert answer["type"] == "toolResult", answer
        complete(t, {"busyNs": int(busy * 1e9)})
    elif MODE == "not_json":
        raw("this is not json\n")
    elif MODE == "not_object":
        raw("[1, 2, 3]\n")
    elif MODE == "unknown_type":
        send({"type": "hello", "turn": t})
    elif MODE == "bad_message":
        send({"type": "wait", "turn": t, "seen": SEEN, "until": 5})
    elif MODE == "duplicate_id":
        send({"type": "emit", "turn": t, "id": "e1", "event": {"type": "x"}})
        read()
        send({"type": "emit", "turn": t, "id": "e1", "event": {"type": "x"}})
    elif MODE == "long_id":
        send({"type": "emit", "turn": t, "id": "e" * 200, "event": {"type": "x"}})
    elif MODE == "wrong_turn":
        send({"type": "wait", "turn": "another-turn", "seen": SEEN})
    elif MODE == "exit_mid_turn":
        sys.stderr.write("giving up\n")
        sys.exit(3)
    elif MODE == "unresponsive":
        time.sleep(30)
    elif MODE == "hangs_with_a_child":
        # A child in a session of its own, out of the runtime's process
        # group, and both pids where the test can find them.
        import subprocess
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        with open(sys.argv[2] + ".partial", "w") as pids:
            pids.write("%d %d\n" % (os.getpid(), child.pid))
        os.rename(sys.argv[2] + ".partial", sys.argv[2])
        time.sleep(300)
    elif MODE in ("double_forks", "double_forks_and_hangs"):
        # A child that forks a grandchild and exits: the grandchild, in a
        # session of its own and deaf to SIGTERM and SIGHUP, is nobody's
        # but init's (or a subreaper's). It writes its pid to FILE; the
        # turn completes once it has (or, hanging, never does).
        double_fork(sys.argv[2])
        if MODE == "double_forks_and_hangs":
            time.sleep(300)
        complete(t, {"done": True})
    elif MODE == "flood":
        raw("\n" * 50)
    elif MODE == "line_too_long":
        raw("x" * 5000 + "\n")
    elif MODE == "report_early":
        send({"type": "report", "turn": t, "seen": SEEN, "receipts": []})


main()
