//! Fixtures shared by the grading-rule tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use sharedos_conformance_metadata::witness::WitnessLog;
use sharedos_grading::grade::completeness::{check_completeness, Completeness};
use sharedos_grading::grade::judge::cell::assemble_cell;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::grade::judge::{judge, GradingInput, Judgement, TurnFacts};
use sharedos_grading::input::case::TurnExpectation;
use sharedos_grading::input::script::AttackScript;
use sharedos_grading::record::receipt::AttemptReceipt;
use sharedos_grading::vocab::GradingLimits;
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::ExecutionRecord;

pub const H: &str = "1111111111111111111111111111111111111111111111111111111111111111";
pub const EXEC: &str = "exec";

pub fn script(id: &str, kind: &str, attempts: Value, terminal: Option<Value>) -> AttackScript {
    let mut value = json!({"id": id, "kind": kind, "invariant": "i", "expectedOutcome": "o", "attempts": attempts});
    if let Some(terminal) = terminal {
        value["terminal"] = terminal;
    }
    serde_json::from_value(value).unwrap()
}

pub fn attempt(id: &str, role: &str, statuses: &[&str], codes: Option<&[&str]>) -> Value {
    let mut expect = json!({"statuses": statuses});
    if let Some(codes) = codes {
        expect["reasonCodes"] = json!(codes);
    }
    json!({"id": id, "role": role, "description": "d", "tool": "files.read", "toolArguments": {"path": "Workspace/policy.md"}, "expect": expect})
}

pub fn control(id: &str) -> Value {
    attempt(id, "control", &["succeeded"], None)
}

pub fn attack(id: &str) -> Value {
    attempt(id, "attack", &["denied"], Some(&["no_matching_grant"]))
}

pub fn call(script: &AttackScript, attempt_id: &str) -> String {
    format!("{EXEC}.{}.{attempt_id}", script.id)
}

pub fn receipt(script: &AttackScript, attempt_id: &str, observed: Option<&str>, code: Option<&str>) -> AttemptReceipt {
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

pub fn operation(
    call_id: &str,
    kind: &str,
    source: &str,
    outcome: &str,
    code: Option<&str>,
    cause: Option<&str>,
) -> Value {
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
pub fn record(
    status: &str,
    code: Option<&str>,
    ended_by: Option<&str>,
    started: bool,
    operations: Vec<Value>,
    extra_events: Vec<Value>,
) -> ExecutionRecord {
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

pub fn plain_record() -> ExecutionRecord {
    record("succeeded", None, None, true, vec![], vec![])
}

pub struct Graded {
    pub judgement: Judgement,
    pub completeness: Completeness,
}

pub fn grade_with(
    script: &AttackScript,
    expect_turn: Option<TurnExpectation>,
    receipts: &[AttemptReceipt],
    record: &ExecutionRecord,
    limits: &GradingLimits,
) -> Graded {
    grade_with_facts(script, expect_turn, receipts, record, limits, &TurnFacts::default())
}

pub fn grade_with_facts(
    script: &AttackScript,
    expect_turn: Option<TurnExpectation>,
    receipts: &[AttemptReceipt],
    record: &ExecutionRecord,
    limits: &GradingLimits,
    facts: &TurnFacts,
) -> Graded {
    let completeness = check_completeness(record);
    let judgement = judge(&GradingInput {
        script,
        expect_turn: expect_turn.as_ref(),
        receipts,
        record,
        earlier_records: &[],
        completeness: &completeness,
        limits,
        facts,
        host_attempts: &[],
        witness: None,
    });
    Graded { judgement, completeness }
}

/// Grades one turn whose scripted model witnessed `witness`.
pub fn grade_witnessed(
    script: &AttackScript,
    receipts: &[AttemptReceipt],
    record: &ExecutionRecord,
    witness: &WitnessLog,
) -> Judgement {
    let completeness = check_completeness(record);
    judge(&GradingInput {
        script,
        expect_turn: None,
        receipts,
        record,
        earlier_records: &[],
        completeness: &completeness,
        limits: &GradingLimits::default(),
        facts: &TurnFacts::default(),
        host_attempts: &[],
        witness: Some(witness),
    })
}

pub fn grade(script: &AttackScript, receipts: &[AttemptReceipt], record: &ExecutionRecord) -> Judgement {
    grade_with(script, None, receipts, record, &GradingLimits::default()).judgement
}

pub fn cell(graded: &Graded, turns: u32) -> Cell {
    assemble_cell("adversary-embedded", &graded.judgement, &graded.completeness, turns, None)
}

pub fn expect_turn(status: ExecutionStatus, code: Option<&str>) -> Option<TurnExpectation> {
    Some(TurnExpectation::ending(status, code))
}
