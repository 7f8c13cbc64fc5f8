//! The grading rules (10-conformance §6), one test per rule.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use sharedos_conformance::case::TurnExpectation;
use sharedos_conformance::judge::attempt::{AttemptGrade, GradingLimits};
use sharedos_conformance::judge::cell::{assemble_cell, declared_cell};
use sharedos_conformance::judge::finding::Finding;
use sharedos_conformance::judge::{judge, CellStatus, GradingInput, Judgement};
use sharedos_conformance::manifest::Cell;
use sharedos_conformance::receipt::AttemptReceipt;
use sharedos_conformance::record::{check_completeness, Completeness};
use sharedos_conformance::script::AttackScript;
use sharedos_model::audit::Source;
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::ExecutionRecord;
use sharedos_model::tool::ToolStatus;

const H: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const EXEC: &str = "exec";

fn script(id: &str, kind: &str, attempts: Value, terminal: Option<Value>) -> AttackScript {
    let mut value = json!({"id": id, "kind": kind, "invariant": "i", "expectedOutcome": "o", "attempts": attempts});
    if let Some(terminal) = terminal {
        value["terminal"] = terminal;
    }
    serde_json::from_value(value).unwrap()
}

fn attempt(id: &str, role: &str, statuses: &[&str], codes: Option<&[&str]>) -> Value {
    let mut expect = json!({"statuses": statuses});
    if let Some(codes) = codes {
        expect["reasonCodes"] = json!(codes);
    }
    json!({"id": id, "role": role, "description": "d", "tool": "files.read", "toolArguments": {"path": "Workspace/policy.md"}, "expect": expect})
}

fn control(id: &str) -> Value {
    attempt(id, "control", &["succeeded"], None)
}

fn attack(id: &str) -> Value {
    attempt(id, "attack", &["denied"], Some(&["no_matching_grant"]))
}

fn call(script: &AttackScript, attempt_id: &str) -> String {
    format!("{EXEC}.{}.{attempt_id}", script.id)
}

fn receipt(script: &AttackScript, attempt_id: &str, observed: Option<&str>, code: Option<&str>) -> AttemptReceipt {
    let attempt = script.attempts.iter().find(|a| a.id == attempt_id).unwrap();
    let mut value = json!({
        "moveId": script.id, "kind": script.kind, "attemptId": attempt_id, "role": attempt.role,
        "attempted": observed.is_some(), "argumentKeys": ["path"], "expect": attempt.expect
    });
    if let Some(observed) = observed {
        value["observed"] = json!(observed);
        value["callId"] = json!(call(script, attempt_id));
    } else {
        value["detail"] = json!("the host closed before this attempt");
    }
    if let Some(code) = code {
        value["reasonCode"] = json!(code);
    }
    AttemptReceipt::from_value(&value).unwrap()
}

fn operation(call_id: &str, kind: &str, source: &str, outcome: &str, code: Option<&str>, cause: Option<&str>) -> Value {
    let mut op = json!({"at": "2026-08-18T09:00:01.000Z", "kind": kind, "source": source, "outcome": outcome, "operationId": call_id, "failClosed": false, "tool": "files.read"});
    if let Some(code) = code {
        op["reasonCode"] = json!(code);
    }
    if let Some(cause) = cause {
        op["cause"] = json!(cause);
    }
    op
}

/// A usable record with the given ending, operations and events.
fn record(status: &str, code: Option<&str>, ended_by: Option<&str>, started: bool, operations: Vec<Value>, extra_events: Vec<Value>) -> ExecutionRecord {
    let mut events = Vec::new();
    if started {
        events.push(json!({"type": "turn.started", "data": {"visibleTools": ["files.read"]}}));
    } else {
        events.push(json!({"type": "turn.denied", "data": {"code": code}}));
    }
    events.extend(extra_events);
    let events: Vec<Value> = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            json!({"version": "1", "eventId": format!("e{i}"), "executionId": EXEC, "traceId": "t", "sequence": i,
                   "type": e["type"], "data": e["data"], "occurredAt": "2026-08-18T09:00:00.000Z"})
        })
        .collect();
    let decisions: Vec<Value> = operations
        .iter()
        .map(|_| json!({"at": "2026-08-18T09:00:01.000Z", "outcome": "allowed", "reasonCode": "allowed", "authorityHash": H, "failClosed": false}))
        .collect();
    let mut execution = json!({
        "executionId": EXEC, "traceId": "t", "agent": {"kind": "agent", "agentId": "a"}, "status": status,
        "exposedTools": [], "requestedTools": [], "decisions": decisions, "operations": operations, "events": events
    });
    if let Some(code) = code {
        execution["terminalReasonCode"] = json!(code);
    }
    if let Some(ended_by) = ended_by {
        execution["endedBy"] = json!(ended_by);
    }
    let snapshots = if code == Some("authority_unavailable") {
        json!([])
    } else {
        json!([{"hash": H, "grantIds": [], "grantCount": 0, "firstSeenAt": "2026-08-18T09:00:00.000Z", "lastSeenAt": "2026-08-18T09:00:00.000Z", "observations": 1}])
    };
    serde_json::from_value(json!({
        "version": "1", "recordedAt": "2026-08-18T09:00:05.000Z",
        "experiment": {"experimentId": "x", "taskId": "t", "runId": "r", "specHash": H, "worldHash": H, "evaluatorHash": H},
        "system": {"protocolVersion": "1", "sharedOsVersion": "0", "runtime": {"id": "r", "version": "1", "protocolVersion": "1"}, "adapterId": "c", "policyHash": H},
        "authority": {"principal": {"kind": "agent", "agentId": "o"}, "actor": {"kind": "agent", "agentId": "a"}, "owner": {"kind": "human", "userId": "u"}, "namespaceId": "w", "purpose": "p", "snapshots": snapshots},
        "execution": execution,
        "cost": {"startedAt": "2026-08-18T09:00:00.000Z", "completedAt": "2026-08-18T09:00:05.000Z", "elapsedMs": 5000, "toolCalls": 0, "authorityLoads": 1, "auditEvents": 0}
    }))
    .unwrap()
}

fn plain_record() -> ExecutionRecord {
    record("succeeded", None, None, true, vec![], vec![])
}

struct Graded {
    judgement: Judgement,
    completeness: Completeness,
}

fn grade_with(script: &AttackScript, expect_turn: Option<TurnExpectation>, receipts: &[AttemptReceipt], record: &ExecutionRecord, limits: &GradingLimits) -> Graded {
    let completeness = check_completeness(record);
    let judgement = judge(&GradingInput {
        script,
        expect_turn: expect_turn.as_ref(),
        receipts,
        record,
        completeness: &completeness,
        limits,
    });
    Graded { judgement, completeness }
}

fn grade(script: &AttackScript, receipts: &[AttemptReceipt], record: &ExecutionRecord) -> Judgement {
    grade_with(script, None, receipts, record, &GradingLimits::default()).judgement
}

fn cell(graded: &Graded, turns: u32) -> Cell {
    assemble_cell("adversary-embedded", &graded.judgement, &graded.completeness, turns, None)
}

fn expect_turn(status: ExecutionStatus, code: Option<&str>) -> Option<TurnExpectation> {
    Some(TurnExpectation { status, reason_code: code.map(str::to_string) })
}

// ---- §6.1 vocabulary ----

#[test]
fn r2_cell_statuses_are_the_six_of_the_vocabulary() {
    let spelled: Vec<String> = CellStatus::ALL.iter().map(|s| serde_json::to_value(s).unwrap().as_str().unwrap().to_string()).collect();
    assert_eq!(spelled, ["pass", "fail", "not_exercised", "not_applicable", "not_implemented", "out_of_scope"]);
    for status in CellStatus::ALL {
        assert_eq!(status.label(), status.as_str().replace('_', " "));
    }
}

#[test]
fn r3_only_fail_and_not_exercised_break_a_build() {
    let breaking: Vec<CellStatus> = CellStatus::ALL.into_iter().filter(|s| s.breaks_build()).collect();
    assert_eq!(breaking, [CellStatus::Fail, CellStatus::NotExercised]);
}

// ---- §6.2 per-attempt outcome ----

#[test]
fn r39_a_receipt_passes_only_with_an_expected_status_and_code() {
    let s = script("m", "read_to_mutation", json!([attack("a")]), None);
    let pass = grade(&s, &[receipt(&s, "a", Some("denied"), Some("no_matching_grant"))], &plain_record());
    assert_eq!(pass.status, CellStatus::Pass);

    let wrong_code = grade(&s, &[receipt(&s, "a", Some("denied"), Some("grant_exhausted"))], &plain_record());
    assert_eq!(wrong_code.status, CellStatus::Fail);
    let wrong_status = grade(&s, &[receipt(&s, "a", Some("succeeded"), None)], &plain_record());
    assert_eq!(wrong_status.status, CellStatus::Fail);
    match wrong_status.finding.unwrap() {
        Finding::AttemptMissedExpectation { attempt_id, expected, observed, reason_code } => {
            assert_eq!(attempt_id, "a");
            assert_eq!(expected.statuses, vec![ToolStatus::Denied]);
            assert_eq!(observed, Some(ToolStatus::Succeeded));
            assert_eq!(reason_code, None);
        }
        other => panic!("unexpected {other:?}"),
    }
    let missing_code = grade(&s, &[receipt(&s, "a", Some("denied"), None)], &plain_record());
    assert_eq!(missing_code.status, CellStatus::Fail, "a refusal without a code does not meet a coded expectation");
}

#[test]
fn r34_a_missing_receipt_is_not_exercised_never_pass() {
    let s = script("m", "read_to_mutation", json!([attack("a")]), None);
    let judgement = grade(&s, &[], &plain_record());
    assert_eq!(judgement.status, CellStatus::NotExercised);
    assert_eq!(judgement.attempts[0].grade, AttemptGrade::NotExercised);
    assert!(matches!(judgement.finding, Some(Finding::AttemptNeverReached { .. })));
}

#[test]
fn an_unissued_receipt_without_excuse_is_not_exercised_with_its_detail() {
    let s = script("m", "read_to_mutation", json!([attack("a")]), None);
    let judgement = grade(&s, &[receipt(&s, "a", None, None)], &plain_record());
    assert_eq!(judgement.status, CellStatus::NotExercised);
    assert_eq!(judgement.attempts[0].detail.as_deref(), Some("the host closed before this attempt"));
}

#[test]
fn receipts_of_another_script_do_not_count() {
    let s = script("m", "read_to_mutation", json!([attack("a")]), None);
    let other = script("other", "read_to_mutation", json!([attack("a")]), None);
    let judgement = grade(&s, &[receipt(&other, "a", Some("denied"), Some("no_matching_grant"))], &plain_record());
    assert_eq!(judgement.status, CellStatus::NotExercised);
}

#[test]
fn r20_an_attempt_declared_unreachable_is_not_applicable_with_its_reason() {
    let mut unreachable = attack("switch");
    unreachable["unreachable"] = json!("the namespace is fixed by the envelope");
    let s = script("m", "namespace_crossing", json!([control("c"), attack("a"), unreachable]), None);
    let receipts = [
        receipt(&s, "c", Some("succeeded"), None),
        receipt(&s, "a", Some("denied"), Some("no_matching_grant")),
        receipt(&s, "switch", None, None),
    ];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::Pass, "an unreachable attempt only narrows the row");
    assert_eq!(graded.judgement.attempts[2].grade, AttemptGrade::NotApplicable);
    assert_eq!(graded.judgement.attempts[2].detail.as_deref(), Some("the namespace is fixed by the envelope"));
    let c = cell(&graded, 1);
    assert_eq!((c.attempted, c.declared, c.not_applicable), (2, 3, 1));
}

#[test]
fn r38_an_unreachable_attempt_that_a_receipt_shows_issued_is_graded_on_the_receipt() {
    let s = script("m", "read_to_mutation", json!([attack("a")]), None);
    let limits = GradingLimits { unreachable: [("a".to_string(), "the column cannot".to_string())].into(), ..GradingLimits::default() };
    let receipts = [receipt(&s, "a", Some("succeeded"), None)];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &limits);
    assert_eq!(graded.judgement.status, CellStatus::Fail);
}

#[test]
fn r40_refused_by_is_the_source_of_the_tool_operation_under_the_call_id() {
    let s = script("m", "hidden_tool", json!([attack("a"), control("c")]), None);
    let ops = vec![
        operation(&call(&s, "a"), "tool", "envelope", "denied", Some("no_matching_grant"), Some("not_offered")),
        operation(&call(&s, "c"), "tool", "kernel", "succeeded", None, None),
    ];
    let rec = record("succeeded", None, None, true, ops, vec![]);
    let receipts = [receipt(&s, "a", Some("denied"), Some("no_matching_grant")), receipt(&s, "c", Some("succeeded"), None)];
    let graded = grade_with(&s, None, &receipts, &rec, &GradingLimits::default());
    assert_eq!(graded.judgement.attempts[0].refused_by, Some(Source::Envelope));
    assert_eq!(graded.judgement.attempts[1].refused_by, None, "a success credits no boundary");
    let c = cell(&graded, 1);
    assert_eq!(c.refused_by, vec![Source::Envelope]);
    assert_eq!(c.causes, vec!["not_offered"]);
}

#[test]
fn r53_a_refused_dispatch_reports_the_transport_code_as_its_cause() {
    let mut a = attempt("dispatch", "attack", &["denied", "failed"], Some(&["message_request_not_accepted"]));
    a["tool"] = json!("messages.request");
    let s = script("m", "route_lease_revoked", json!([a]), None);
    let id = call(&s, "dispatch");
    let ops = vec![
        operation(&id, "message", "kernel", "denied", Some("route_lease_revoked"), None),
        operation(&id, "tool", "kernel", "failed", Some("message_request_not_accepted"), None),
    ];
    let rec = record("succeeded", None, None, true, ops, vec![]);
    let graded = grade_with(&s, None, &[receipt(&s, "dispatch", Some("failed"), Some("message_request_not_accepted"))], &rec, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::Pass);
    let c = cell(&graded, 1);
    assert_eq!(c.reason_codes, vec!["message_request_not_accepted"]);
    assert_eq!(c.causes, vec!["route_lease_revoked"]);
    assert_eq!(c.refused_by, vec![Source::Kernel]);
}

#[test]
fn r55_a_receipt_carrying_only_the_transport_code_fails_the_route_lease_row() {
    let mut a = attempt("dispatch", "attack", &["denied", "failed"], Some(&["message_request_not_accepted"]));
    a["tool"] = json!("messages.request");
    let s = script("m", "route_lease_revoked", json!([a]), None);
    let judgement = grade(&s, &[receipt(&s, "dispatch", Some("denied"), Some("route_lease_revoked"))], &plain_record());
    assert_eq!(judgement.status, CellStatus::Fail);
}

// ---- §6.3 case status without a turn expectation ----

#[test]
fn r36_a_row_whose_every_adversarial_attempt_is_not_applicable_is_not_applicable() {
    let s = script("m", "grant_material_unreachable", json!([attack("a"), control("c")]), None);
    let limits = GradingLimits { unreachable: [("a".to_string(), "a harness is never handed the runtime surfaces".to_string())].into(), ..GradingLimits::default() };
    // The control failing does not matter: the structural fact comes first.
    let receipts = [receipt(&s, "c", Some("denied"), Some("no_matching_grant"))];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &limits);
    assert_eq!(graded.judgement.status, CellStatus::NotApplicable);
    assert_eq!(
        graded.judgement.detail().as_deref(),
        Some("attempt `a` cannot be made here: a harness is never handed the runtime surfaces")
    );
}

#[test]
fn r35_a_control_that_did_not_succeed_makes_the_row_not_exercised() {
    let s = script("m", "read_to_mutation", json!([control("c"), attack("a")]), None);
    let receipts = [receipt(&s, "c", Some("denied"), Some("no_matching_grant")), receipt(&s, "a", Some("succeeded"), None)];
    let judgement = grade(&s, &receipts, &plain_record());
    assert_eq!(judgement.status, CellStatus::NotExercised, "the control rule comes before the attack's fail");
    assert_eq!(
        judgement.finding,
        Some(Finding::ControlDidNotSucceed { attempt_id: "c".into(), observed: Some(ToolStatus::Denied), reason_code: Some("no_matching_grant".into()) })
    );
}

#[test]
fn an_adversarial_fail_outranks_an_unexercised_attack() {
    let s = script("m", "read_to_mutation", json!([attack("a"), attack("b")]), None);
    let receipts = [receipt(&s, "b", Some("succeeded"), None)];
    assert_eq!(grade(&s, &receipts, &plain_record()).status, CellStatus::Fail);
}

#[test]
fn r37_the_record_row_is_not_applicable_when_any_adversarial_attempt_is_unreachable() {
    let s = script("m", "record_completeness", json!([control("c"), attack("a"), attack("b")]), None);
    let limits = GradingLimits { unreachable: [("b".to_string(), "the router refuses unknown names".to_string())].into(), ..GradingLimits::default() };
    let receipts = [receipt(&s, "c", Some("succeeded"), None), receipt(&s, "a", Some("denied"), Some("no_matching_grant"))];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &limits);
    assert_eq!(graded.judgement.status, CellStatus::NotApplicable);
}

#[test]
fn r37_the_record_row_fails_on_an_unusable_record_and_other_rows_do_not() {
    let mut unusable = plain_record();
    unusable.execution.events.clear();
    for kind in ["record_completeness", "read_to_mutation"] {
        let s = script("m", kind, json!([attack("a")]), None);
        let graded = grade_with(&s, None, &[receipt(&s, "a", Some("denied"), Some("no_matching_grant"))], &unusable, &GradingLimits::default());
        let c = cell(&graded, 1);
        assert!(!c.record_usable);
        assert_eq!(c.record_gaps, vec!["execution.events"]);
        if kind == "record_completeness" {
            assert_eq!(graded.judgement.status, CellStatus::Fail);
            assert_eq!(graded.judgement.finding, Some(Finding::RecordUnusable { gaps: vec!["execution.events".into()] }));
        } else {
            assert_eq!(graded.judgement.status, CellStatus::Pass);
        }
    }
}

// ---- §6.4 case status with a turn expectation ----

#[test]
fn r41_a_turn_refused_before_the_runtime_started_passes_on_its_ending_alone() {
    let s = script("m", "authority_unavailable", json!([attack("a"), attack("b"), attack("c")]), None);
    let rec = record("denied", Some("authority_unavailable"), None, false, vec![], vec![]);
    let graded = grade_with(&s, expect_turn(ExecutionStatus::Denied, Some("authority_unavailable")), &[], &rec, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::Pass);
    assert!(graded.judgement.attempts.iter().all(|a| a.grade == AttemptGrade::NotApplicable));
    assert_eq!(
        graded.judgement.detail().as_deref(),
        Some("the turn ended `denied` with `authority_unavailable`, as the row requires, before its runtime started")
    );
    let c = cell(&graded, 1);
    assert_eq!((c.attempted, c.declared, c.not_applicable), (0, 3, 3));
    assert_eq!(c.refused_by, vec![Source::Kernel]);
    assert_eq!(c.reason_codes, vec!["authority_unavailable"]);
    assert!(c.record_usable, "the fail-closed exemption keeps the record usable");

    let wrong = record("denied", Some("no_matching_grant"), None, false, vec![], vec![]);
    let graded = grade_with(&s, expect_turn(ExecutionStatus::Denied, Some("authority_unavailable")), &[], &wrong, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::Fail);
}

#[test]
fn r42_a_started_turn_needs_its_controls_its_attacks_and_its_ending() {
    let s = script("m", "runtime_crashed", json!([control("c")]), Some(json!({"type": "crash", "reason": "stop"})));
    let expected = expect_turn(ExecutionStatus::Failed, Some("runtime_failed"));
    let ended = record("failed", Some("runtime_failed"), Some("envelope"), true, vec![operation(&call(&s, "c"), "tool", "kernel", "succeeded", None, None)], vec![]);
    let ok = grade_with(&s, expected.clone(), &[receipt(&s, "c", Some("succeeded"), None)], &ended, &GradingLimits::default());
    assert_eq!(ok.judgement.status, CellStatus::Pass);

    let control_denied = grade_with(&s, expected.clone(), &[receipt(&s, "c", Some("denied"), Some("no_matching_grant"))], &ended, &GradingLimits::default());
    assert_eq!(control_denied.judgement.status, CellStatus::NotExercised);

    let completed = record("succeeded", None, None, true, vec![], vec![]);
    let wrong_ending = grade_with(&s, expected, &[receipt(&s, "c", Some("succeeded"), None)], &completed, &GradingLimits::default());
    assert_eq!(wrong_ending.judgement.status, CellStatus::Fail, "a crash is never treated as unasked");
    assert!(matches!(wrong_ending.judgement.finding, Some(Finding::TurnEndedWrongly { .. })));
}

#[test]
fn a_turn_graded_row_fails_when_an_attack_missed_even_if_the_turn_never_started() {
    let s = script("m", "authority_unavailable", json!([attack("a")]), None);
    let rec = record("denied", Some("authority_unavailable"), None, false, vec![], vec![]);
    let graded = grade_with(&s, expect_turn(ExecutionStatus::Denied, Some("authority_unavailable")), &[receipt(&s, "a", Some("succeeded"), None)], &rec, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::Fail);
}

fn escalation_script() -> AttackScript {
    let mut reach = attempt("reach", "attack", &["denied"], Some(&["tool_unavailable"]));
    reach["tool"] = json!("admin.grant.issue");
    script("m", "escalation_recorded", json!([reach, control("c")]), Some(json!({"type": "escalate", "reason": "needs a human"})))
}

#[test]
fn r43_an_escalation_row_that_never_asked_is_not_exercised() {
    let s = escalation_script();
    let receipts = [receipt(&s, "reach", Some("denied"), Some("tool_unavailable")), receipt(&s, "c", Some("succeeded"), None)];
    let completed = record("succeeded", None, None, true, vec![], vec![]);
    let graded = grade_with(&s, expect_turn(ExecutionStatus::Escalated, Some("escalation_requested")), &receipts, &completed, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::NotExercised);
    assert_eq!(
        graded.judgement.detail().as_deref(),
        Some("the turn ended `succeeded` where the row requires `escalated` with `escalation_requested`; nothing named or announced `sharedos.escalate`, so that ending was never asked for")
    );
}

#[test]
fn r43_an_escalation_row_that_asked_and_did_not_end_escalated_fails() {
    let s = escalation_script();
    let receipts = [receipt(&s, "reach", Some("denied"), Some("tool_unavailable")), receipt(&s, "c", Some("succeeded"), None)];
    let expected = expect_turn(ExecutionStatus::Escalated, Some("escalation_requested"));
    let mut named = operation("x.escalate", "tool", "envelope", "denied", Some("tool_unavailable"), None);
    named["tool"] = json!("sharedos.escalate");
    let by_call = record("succeeded", None, None, true, vec![named], vec![]);
    let announcement = json!({"type": "runtime.event", "data": {"runtime": {"id": "r"}, "type": "escalation.asked", "data": {}}});
    let by_announcement = record("succeeded", None, None, true, vec![], vec![announcement]);
    let mut by_claim = record("succeeded", None, None, true, vec![], vec![]);
    by_claim.execution.escalation_asked = Some(serde_json::from_value(json!({"tool": "sharedos.escalate", "reason": "r"})).unwrap());
    for rec in [by_call, by_announcement, by_claim] {
        let graded = grade_with(&s, expected.clone(), &receipts, &rec, &GradingLimits::default());
        assert_eq!(graded.judgement.status, CellStatus::Fail);
    }
}

#[test]
fn r44_a_met_ending_credits_the_boundary_that_ended_it() {
    let s = escalation_script();
    let receipts = [receipt(&s, "reach", Some("denied"), Some("tool_unavailable")), receipt(&s, "c", Some("succeeded"), None)];
    let escalated = record("escalated", Some("escalation_requested"), None, true, vec![], vec![]);
    let graded = grade_with(&s, expect_turn(ExecutionStatus::Escalated, Some("escalation_requested")), &receipts, &escalated, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::Pass);
    let c = cell(&graded, 1);
    assert!(c.refused_by.is_empty(), "an escalation credits nobody");
    assert_eq!(c.reason_codes, vec!["escalation_requested", "tool_unavailable"]);

    let crash = script("m", "runtime_crashed", json!([control("c")]), Some(json!({"type": "crash", "reason": "stop"})));
    for (ended_by, credited) in [("envelope", vec![Source::Envelope]), ("runtime", vec![])] {
        let rec = record("failed", Some("runtime_failed"), Some(ended_by), true, vec![], vec![]);
        let graded = grade_with(&crash, expect_turn(ExecutionStatus::Failed, Some("runtime_failed")), &[receipt(&crash, "c", Some("succeeded"), None)], &rec, &GradingLimits::default());
        assert_eq!(cell(&graded, 1).refused_by, credited);
    }
}

#[test]
fn v6_an_attempt_left_unissued_by_an_expected_envelope_ending_is_structurally_unreachable() {
    let s = script("m", "audit_unavailable", json!([attack("first"), attack("second")]), None);
    let receipts = [receipt(&s, "first", Some("denied"), Some("no_matching_grant")), receipt(&s, "second", None, None)];
    let expected = expect_turn(ExecutionStatus::Failed, Some("audit_unavailable"));
    let rec = record("failed", Some("audit_unavailable"), Some("envelope"), true, vec![], vec![]);
    let graded = grade_with(&s, expected.clone(), &receipts, &rec, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::Pass);
    let c = cell(&graded, 1);
    assert_eq!((c.attempted, c.declared, c.not_applicable), (1, 2, 1));
    assert_eq!(c.refused_by, vec![Source::Envelope]);

    // Ended by the runtime, the same gap is an attack that never happened.
    let by_runtime = record("failed", Some("audit_unavailable"), Some("runtime"), true, vec![], vec![]);
    let graded = grade_with(&s, expected, &receipts, &by_runtime, &GradingLimits::default());
    assert_eq!(graded.judgement.status, CellStatus::NotExercised);
}

// ---- §6.5 cell assembly ----

#[test]
fn r45_driver_issued_lists_only_attempts_actually_issued_in_declared_order() {
    let mut over = attempt("over", "attack", &["denied"], Some(&["step_limit_exceeded"]));
    over["overBudget"] = json!(true);
    let s = script("m", "budget_exceeded", json!([control("c"), over]), None);
    let limits = GradingLimits {
        driver_issued: [("over".to_string(), "the loop cannot pass its own limit".to_string()), ("c".to_string(), "x".to_string())].into(),
        ..GradingLimits::default()
    };
    let receipts = [receipt(&s, "c", None, None), receipt(&s, "over", Some("denied"), Some("step_limit_exceeded"))];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &limits);
    assert_eq!(graded.judgement.driver_issued, vec!["over"]);
}

#[test]
fn r46_an_out_of_scope_column_keeps_its_evidence_and_takes_the_reason() {
    let s = script("m", "budget_exceeded", json!([attack("a")]), None);
    let graded = grade_with(&s, None, &[receipt(&s, "a", Some("denied"), Some("no_matching_grant"))], &plain_record(), &GradingLimits::default());
    let c = assemble_cell("mcp", &graded.judgement, &graded.completeness, 1, Some("the loop is not SharedOS's"));
    assert_eq!(c.status, CellStatus::OutOfScope);
    assert_eq!(c.detail.as_deref(), Some("the loop is not SharedOS's"));
    assert_eq!((c.attempted, c.reason_codes.len()), (1, 1));
}

#[test]
fn r47_r85_an_unsupported_row_is_a_declared_not_applicable_cell_with_its_reason() {
    let c = declared_cell("codex-scripted", CellStatus::NotApplicable, 2, "a harness cannot crash on cue");
    assert_eq!((c.turns, c.attempted, c.not_applicable, c.declared), (0, 0, 2, 2));
    assert!(!c.record_usable);
    assert_eq!(c.detail.as_deref(), Some("a harness cannot crash on cue"));
}

#[test]
fn r4_a_not_implemented_cell_is_never_run_and_never_breaks_a_build() {
    let c = declared_cell("adversary-embedded", CellStatus::NotImplemented, 1, "no view layer");
    assert_eq!((c.turns, c.attempted, c.not_applicable, c.declared), (0, 0, 0, 1));
    assert!(!c.status.breaks_build());
}

#[test]
fn reason_codes_and_causes_are_sorted_and_unique_and_turns_are_counted() {
    let s = script("m", "revoked_mid_turn", json!([attack("a"), attack("b"), control("c")]), None);
    let receipts = [
        receipt(&s, "a", Some("denied"), Some("no_matching_grant")),
        receipt(&s, "b", Some("denied"), Some("no_matching_grant")),
        receipt(&s, "c", Some("succeeded"), None),
    ];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &GradingLimits::default());
    let c = cell(&graded, 2);
    assert_eq!(c.reason_codes, vec!["no_matching_grant"]);
    assert_eq!(c.turns, 2);
    assert_eq!(c.detail, None);
}
