//! Receipts: the self-report reader and receipts read from records
//! (R23, R30, R51–R55).

use serde_json::{json, Value};
use sharedos_grading::grade::receipt::{live_receipts_from_record, receipts_from_record, NO_OPERATION};
use sharedos_grading::input::script::AttackScript;
use sharedos_grading::record::receipt::{derived_call_id, read_adversarial_report, AttemptReceipt};
use sharedos_model::execution::ExecutionResult;
use sharedos_model::record::ExecutionRecord;
use sharedos_model::tool::ToolStatus;

const H: &str = "1111111111111111111111111111111111111111111111111111111111111111";

fn script() -> AttackScript {
    serde_json::from_value(json!({
        "id": "kernel.route-lease-revoked", "kind": "route_lease_revoked", "invariant": "i", "expectedOutcome": "o",
        "attempts": [
            {"id": "send", "role": "control", "description": "d", "tool": "messages.request",
             "toolArguments": {"recipient": "owner", "payload": {"q": 1}}, "expect": {"statuses": ["succeeded"]}},
            {"id": "dispatch", "role": "attack", "description": "d", "tool": "messages.request",
             "toolArguments": {"recipient": "owner", "payload": {"q": 1}},
             "expect": {"statuses": ["denied", "failed"], "reasonCodes": ["message_request_not_accepted"]}},
            {"id": "read", "role": "control", "description": "d", "tool": "files.read",
             "toolArguments": {"path": "Workspace/policy.md"}, "expect": {"statuses": ["succeeded"]}},
            {"id": "later", "role": "attack", "description": "d", "tool": "files.read", "turn": 2,
             "toolArguments": {"path": "Workspace/policy.md"}, "expect": {"statuses": ["denied"]}}
        ]
    }))
    .unwrap()
}

fn receipt_json(attempt_id: &str, observed: &str, code: Option<&str>) -> Value {
    let mut value = json!({
        "moveId": "kernel.route-lease-revoked", "kind": "route_lease_revoked", "attemptId": attempt_id, "role": "attack",
        "attempted": true, "callId": format!("exec.kernel.route-lease-revoked.{attempt_id}"), "argumentKeys": ["path"],
        "observed": observed, "expect": {"statuses": ["denied"]}
    });
    if let Some(code) = code {
        value["reasonCode"] = json!(code);
    }
    value
}

fn event(sequence: usize, kind: &str, data: Value) -> Value {
    json!({"version": "1", "eventId": format!("e{sequence}"), "executionId": "exec", "traceId": "t", "sequence": sequence,
           "type": kind, "data": data, "occurredAt": "2026-08-18T09:00:00.000Z"})
}

fn result(metadata: Option<Value>, events: Vec<Value>) -> ExecutionResult {
    let mut value = json!({"version": "1", "executionId": "exec", "traceId": "t", "status": "cancelled", "events": events,
                           "startedAt": "2026-08-18T09:00:00.000Z", "completedAt": "2026-08-18T09:00:01.000Z"});
    if let Some(metadata) = metadata {
        value["metadata"] = metadata;
    }
    serde_json::from_value(value).unwrap()
}

fn started() -> Value {
    event(
        0,
        "turn.started",
        json!({"visibleTools": ["files.read"], "runtime": {"id": "adversary", "version": "1", "protocolVersion": "1"}}),
    )
}

fn announced(sequence: usize, receipt: Value) -> Value {
    event(
        sequence,
        "runtime.event",
        json!({"runtime": {"id": "adversary"}, "type": "conformance.attempt", "data": receipt}),
    )
}

#[test]
fn r23_the_report_in_outcome_metadata_is_preferred() {
    let report = json!({"version": "1", "runtimeId": "adversary", "executionId": "exec", "traceId": "t",
                        "visibleTools": ["files.read"], "moveIds": ["kernel.route-lease-revoked"],
                        "receipts": [receipt_json("read", "succeeded", None)]});
    let events = vec![started(), announced(1, receipt_json("dispatch", "denied", Some("x")))];
    let read = read_adversarial_report(&result(Some(json!({"conformance": report})), events)).unwrap();
    assert_eq!(read.receipts.len(), 1);
    assert_eq!(read.receipts[0].attempt_id, "read");
}

#[test]
fn r30_the_report_is_recovered_from_announcements_when_metadata_lacks_it() {
    let events = vec![
        started(),
        announced(1, receipt_json("send", "succeeded", None)),
        announced(2, json!({"moveId": "kernel.route-lease-revoked", "bogus": true})),
        event(3, "runtime.event", json!({"runtime": {"id": "adversary"}, "type": "other", "data": {}})),
        announced(4, receipt_json("dispatch", "failed", Some("message_request_not_accepted"))),
    ];
    let broken = json!({"conformance": {"version": "1"}});
    let report = read_adversarial_report(&result(Some(broken), events)).unwrap();
    assert_eq!(report.runtime_id, "adversary");
    assert_eq!(report.visible_tools, vec!["files.read"]);
    assert_eq!(report.move_ids, vec!["kernel.route-lease-revoked"]);
    let ids: Vec<&str> = report.receipts.iter().map(|r| r.attempt_id.as_str()).collect();
    assert_eq!(ids, vec!["send", "dispatch"], "malformed announcements are skipped");
}

#[test]
fn a_turn_that_never_started_and_announced_nothing_has_no_report() {
    assert!(read_adversarial_report(&result(None, vec![event(0, "turn.denied", json!({"code": "x"}))])).is_none());
}

#[test]
fn receipts_are_strict_and_bounded() {
    let mut extra = receipt_json("send", "succeeded", None);
    extra["argumentValues"] = json!({"path": "x"});
    assert!(AttemptReceipt::from_value(&extra).is_err());
    let mut long = receipt_json("send", "succeeded", None);
    long["detail"] = json!("x".repeat(513));
    assert_eq!(AttemptReceipt::from_value(&long).unwrap_err().pointer, "/detail");
}

fn record(operations: Value) -> ExecutionRecord {
    serde_json::from_value(json!({
        "version": "1", "recordedAt": "2026-08-18T09:00:05.000Z",
        "experiment": {"experimentId": "x", "taskId": "t", "runId": "r", "specHash": H, "worldHash": H, "evaluatorHash": H},
        "system": {"protocolVersion": "1", "sharedOsVersion": "0", "runtime": {"id": "r", "version": "1", "protocolVersion": "1"}, "adapterId": "c", "policyHash": H},
        "authority": {"principal": {"kind": "agent", "agentId": "o"}, "actor": {"kind": "agent", "agentId": "a"}, "owner": {"kind": "human", "userId": "u"}, "namespaceId": "w", "purpose": "p", "snapshots": []},
        "execution": {"executionId": "exec", "traceId": "t", "agent": {"kind": "agent", "agentId": "a"}, "status": "succeeded",
                      "exposedTools": [], "requestedTools": [], "decisions": [], "operations": operations, "events": []},
        "cost": {"startedAt": "2026-08-18T09:00:00.000Z", "completedAt": "2026-08-18T09:00:05.000Z", "elapsedMs": 5000, "toolCalls": 0, "authorityLoads": 0, "auditEvents": 0}
    }))
    .unwrap()
}

fn op(id: &str, kind: &str, outcome: &str, code: Option<&str>, tool: &str, path: Option<&[&str]>) -> Value {
    let mut value = json!({"at": "2026-08-18T09:00:01.000Z", "kind": kind, "source": "kernel", "outcome": outcome,
                           "operationId": id, "tool": tool, "failClosed": false});
    if let Some(code) = code {
        value["reasonCode"] = json!(code);
    }
    if let Some(path) = path {
        value["resource"] = json!({"namespace": "files", "path": path});
    }
    value
}

#[test]
fn r26_call_ids_are_derived_from_execution_move_and_attempt() {
    assert_eq!(
        derived_call_id("read-to-mutation.baseline.model-scripted", "kernel.read-to-mutation", "read-the-target"),
        "read-to-mutation.baseline.model-scripted.kernel.read-to-mutation.read-the-target"
    );
}

#[test]
fn r51_scripted_receipts_from_a_record_match_by_derived_call_id() {
    let s = script();
    let id = |a: &str| derived_call_id("exec", &s.id, a);
    let rec = record(json!([
        op(&id("send"), "tool", "succeeded", None, "messages.request", None),
        op(&id("dispatch"), "message", "denied", Some("route_lease_revoked"), "messages.request", None),
        op(&id("dispatch"), "tool", "failed", Some("message_request_not_accepted"), "messages.request", None),
    ]));
    let receipts = receipts_from_record(&s, 1, "exec", &rec);
    assert_eq!(receipts.len(), 3, "only attempts of the current turn");
    assert!(receipts[0].attempted);
    assert_eq!(receipts[0].argument_keys, vec!["payload", "recipient"], "declared keys, sorted, no values");
    let dispatch = &receipts[1];
    assert_eq!(dispatch.observed, Some(ToolStatus::Failed));
    assert_eq!(dispatch.reason_code.as_deref(), Some("message_request_not_accepted"));
    assert_eq!(dispatch.cause.as_deref(), Some("route_lease_revoked"), "R53: the sibling dispatch gives the cause");
    assert!(!receipts[2].attempted);
    assert_eq!(receipts[2].detail.as_deref(), Some(NO_OPERATION));
}

#[test]
fn r54_a_call_id_whose_only_operation_is_a_dispatch_is_not_an_attempt() {
    let s = script();
    let rec = record(json!([op(
        &derived_call_id("exec", &s.id, "dispatch"),
        "message",
        "denied",
        Some("route_lease_revoked"),
        "messages.request",
        None
    )]));
    let receipts = receipts_from_record(&s, 1, "exec", &rec);
    assert!(!receipts[1].attempted);
}

#[test]
fn r51_live_call_ids_match_nothing_by_id() {
    let s = script();
    let rec =
        record(json!([op("toolu_01", "tool", "succeeded", None, "files.read", Some(&["Workspace", "policy.md"]))]));
    let scripted = receipts_from_record(&s, 1, "exec", &rec);
    assert!(scripted.iter().all(|r| !r.attempted));
}

#[test]
fn r52_live_receipts_match_by_tool_and_path_exact_first_each_operation_once() {
    let s = script();
    let rec = record(json!([
        op("live-1", "tool", "failed", Some("invalid_tool_arguments"), "files.read", None),
        op("live-2", "tool", "succeeded", None, "files.read", Some(&["Workspace", "policy.md"])),
        op("live-3", "tool", "succeeded", None, "messages.request", None),
    ]));
    let receipts = live_receipts_from_record(&s, 1, &rec);
    let read = &receipts[2];
    assert_eq!(read.call_id.as_deref(), Some("live-2"), "an exact path match beats a resource-less one");
    assert_eq!(receipts[0].call_id.as_deref(), Some("live-3"));
    assert!(!receipts[1].attempted, "an operation is consumed once");

    let refused_early =
        record(json!([op("live-1", "tool", "failed", Some("invalid_tool_arguments"), "files.read", None)]));
    let turn_two = live_receipts_from_record(&s, 2, &refused_early);
    assert_eq!(turn_two[0].call_id.as_deref(), Some("live-1"), "a resource-less refusal is the fallback");
    assert_eq!(turn_two[0].observed, Some(ToolStatus::Failed));
}
