#!/usr/bin/env python3
"""A prompted stand-in runtime: it reads the prompt a live seat is given
(the turn message's `text`) and makes the calls it lists, in order, one at
a time, under ids of its own; then it ends the turn as the prompt says."""
import json
import re
import sys

SEEN = 0
CALL = re.compile(r"^\d+\. Call `([^`]+)` with (\{.*\})$")
THEN_CALL = re.compile(r"^Then call `([^`]+)` with (\{.*\})$")


def send(message):
    sys.stdout.write(json.dumps(message, sort_keys=True) + "\n")
    sys.stdout.flush()


def read():
    global SEEN
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    SEEN += 1
    return json.loads(line)


def answer(turn_id, request_id):
    """Wait for the answer to `request_id` (time passes meanwhile)."""
    send({"type": "wait", "turn": turn_id, "seen": SEEN})
    while True:
        message = read()
        if message.get("id") == request_id:
            return message
        if message["type"] in ("abort", "closed"):
            return None
        send({"type": "wait", "turn": turn_id, "seen": SEEN})


def turn(message):
    global SEEN
    SEEN = 1  # seen counts from the turn message
    t, context = message["turn"], message["request"]["context"]
    payload = message["request"]["message"]["payload"]
    lines = payload.get("text", "").splitlines() if isinstance(payload, dict) else []
    for n, line in enumerate(lines):
        found = CALL.match(line)
        if not found:
            continue
        call = {"id": "mine-%d" % n, "tool": found.group(1), "arguments": json.loads(found.group(2)),
                "traceId": context["traceId"], "requestedAt": context["now"]}
        send({"type": "invokeTool", "turn": t, "id": "c%d" % n, "call": call})
        if answer(t, "c%d" % n) is None:
            return
    last = lines[-1] if lines else ""
    escalate = THEN_CALL.match(last)
    if escalate:
        reason = json.loads(escalate.group(2)).get("reason", "")
        send({"type": "outcome", "turn": t, "outcome": {"type": "escalate", "reason": reason}})
    elif last.startswith("Then wait"):
        send({"type": "wait", "turn": t, "seen": SEEN})
    else:
        send({"type": "outcome", "turn": t, "outcome": {"type": "complete", "output": {"text": "done"}}})


def main():
    hello = read()
    send({"type": "ready", "protocol": hello["protocol"],
          "manifest": {"id": "standin.prompted", "version": "1", "protocolVersion": "1"}})
    while True:
        message = read()
        if message["type"] == "turn":
            turn(message)
        elif message["type"] == "fence":
            send({"type": "fenced", "turn": message["turn"], "fence": message["fence"]})


main()
