//! Grading the values a turn expectation states besides status and code:
//! `retryable`, the ending instant, annotations, the lifted record fields,
//! event counts, balances, activity after the result, and the rejections
//! and refusing boundary an attempt may require.

use crate::judging;

use judging::{call, grade_with_facts, operation, receipt, record, script};
use serde_json::{json, Value};
use sharedos_grading::grade::judge::attempt::AttemptGrade;
use sharedos_grading::grade::judge::turn_values::REAL_CLOCK_SLACK_MS;
use sharedos_grading::grade::judge::{Judgement, TurnFacts};
use sharedos_grading::input::case::TurnExpectation;
use sharedos_grading::input::script::AttackScript;
use sharedos_grading::record::receipt::AttemptReceipt;
use sharedos_grading::vocab::{CellStatus, GradingLimits};
use sharedos_model::record::{EscalationAsked, ExecutionRecord};
use std::collections::BTreeMap;

fn expectation(value: Value) -> TurnExpectation {
    serde_json::from_value(value).unwrap()
}

fn probe_script() -> AttackScript {
    script(
        "family.probe",
        "drain",
        json!([{"id": "look", "role": "probe", "description": "d", "read": "draining", "expect": {"statuses": ["succeeded"]}}]),
        None,
    )
}

fn look(script: &AttackScript) -> Vec<AttemptReceipt> {
    let value = json!({"moveId": script.id, "kind": script.kind, "attemptId": "look", "role": "probe",
                       "attempted": true, "argumentKeys": [], "observed": "succeeded", "expect": {"statuses": ["succeeded"]}});
    vec![AttemptReceipt::from_value(&value).unwrap()]
}

fn cancelled() -> ExecutionRecord {
    record("cancelled", Some("turn_cancelled"), None, true, vec![], vec![])
}

fn grade(expected: Value, record: &ExecutionRecord, facts: &TurnFacts) -> Judgement {
    let script = probe_script();
    grade_with_facts(&script, Some(expectation(expected)), &look(&script), record, &GradingLimits::default(), facts)
        .judgement
}

fn facts(retryable: Option<bool>, ended_at_ms: i64) -> TurnFacts {
    TurnFacts { retryable, ended_at_ms: Some(ended_at_ms), after_result: Some(Vec::new()), ..TurnFacts::default() }
}

#[test]
fn e75_e81_retryable_is_graded_as_true_false_or_absent() {
    let record = cancelled();
    let base = json!({"status": "cancelled", "reasonCode": "turn_cancelled"});
    let with = |retryable: Value| {
        let mut e = base.clone();
        e["retryable"] = retryable;
        e
    };
    assert_eq!(grade(with(json!(true)), &record, &facts(Some(true), 0)).status, CellStatus::Pass);
    assert_eq!(grade(with(json!(true)), &record, &facts(Some(false), 0)).status, CellStatus::Fail);
    assert_eq!(grade(with(json!(false)), &record, &facts(None, 0)).status, CellStatus::Fail, "absent is not false");
    assert_eq!(grade(with(Value::Null), &record, &facts(None, 0)).status, CellStatus::Pass, "null requires absence");
    assert_eq!(grade(with(Value::Null), &record, &facts(Some(true), 0)).status, CellStatus::Fail);
    assert_eq!(grade(base, &record, &facts(Some(false), 0)).status, CellStatus::Pass, "unstated is not graded");
}

#[test]
fn e51_the_ending_instant_is_graded_in_ms_from_the_turn_start() {
    let record = cancelled();
    let expected = json!({"status": "cancelled", "reasonCode": "turn_cancelled", "endedAtMs": 120000});
    assert_eq!(grade(expected.clone(), &record, &facts(None, 120_000)).status, CellStatus::Pass);
    let late = grade(expected, &record, &facts(None, 120_001));
    assert_eq!(late.status, CellStatus::Fail);
    assert!(
        late.detail().unwrap().contains("ended at is 120001 ms where the row requires 120000 ms"),
        "{:?}",
        late.detail()
    );
}

#[test]
fn e51_on_a_real_clock_the_ending_instant_may_be_late_by_the_slack_never_early() {
    let mut record = cancelled();
    let mut metadata = serde_json::Map::new();
    metadata.insert("clock".into(), json!("real"));
    record.system.metadata = Some(metadata);
    let expected = json!({"status": "cancelled", "reasonCode": "turn_cancelled", "endedAtMs": 1000});
    let at = |ms: i64| grade(expected.clone(), &record, &facts(None, ms)).status;
    assert_eq!([at(1000), at(1000 + REAL_CLOCK_SLACK_MS)], [CellStatus::Pass, CellStatus::Pass]);
    assert_eq!([at(999), at(1001 + REAL_CLOCK_SLACK_MS)], [CellStatus::Fail, CellStatus::Fail]);
    let early = grade(expected.clone(), &record, &facts(None, 999));
    assert!(
        early
            .detail()
            .unwrap()
            .contains("ended at is 999 ms where the row requires 1000 ms (up to 1500 ms on a real clock)"),
        "{:?}",
        early.detail()
    );
    assert_eq!(at(1009), CellStatus::Pass, "on virtual time the same record would need 1000 ms exactly");
    assert_eq!(
        grade(
            json!({"status": "cancelled", "reasonCode": "turn_cancelled", "endedAtMs": 1000}),
            &cancelled(),
            &facts(None, 1009)
        )
        .status,
        CellStatus::Fail
    );
}

#[test]
fn e88_e90_e92_annotations_are_graded_by_value_and_by_absence() {
    let record = cancelled();
    let mut observed = facts(None, 0);
    observed.metadata.insert("note".into(), json!({"kept": true}));
    observed.metadata.insert("attempt".into(), json!(2));
    let expected = json!({"status": "cancelled", "annotations": {"note": {"kept": true}, "attempt": 2}, "annotationsAbsent": ["afterClose"]});
    assert_eq!(grade(expected, &record, &observed).status, CellStatus::Pass);
    let wrong_value = json!({"status": "cancelled", "annotations": {"attempt": 1}});
    assert_eq!(grade(wrong_value, &record, &observed).status, CellStatus::Fail, "the last write is the one kept");
    let must_be_absent = json!({"status": "cancelled", "annotationsAbsent": ["note"]});
    assert_eq!(grade(must_be_absent, &record, &observed).status, CellStatus::Fail);
}

fn started_with_provenance(runtime: Value) -> ExecutionRecord {
    let started = json!({"type": "turn.started", "data": {"visibleTools": [], "runtime": runtime}});
    record("succeeded", None, None, false, vec![], vec![started])
}

#[test]
fn e85_runtime_metadata_must_be_the_provenance_turn_started_announced() {
    let provenance = json!({"id": "adversary", "version": "1", "protocolVersion": "1"});
    let record = started_with_provenance(provenance.clone());
    let expected = json!({"status": "succeeded", "runtimeProvenance": true});
    let mut observed = facts(None, 0);
    observed.metadata.insert("runtime".into(), provenance);
    assert_eq!(grade(expected.clone(), &record, &observed).status, CellStatus::Pass);
    observed.metadata.insert("runtime".into(), json!({"id": "forged"}));
    assert_eq!(grade(expected.clone(), &record, &observed).status, CellStatus::Fail);
    observed.metadata.remove("runtime");
    assert_eq!(grade(expected, &record, &observed).status, CellStatus::Fail);
}

#[test]
fn e93_e94_e95_prompt_hash_and_escalation_asked_are_read_from_the_record() {
    let hash = "ab".repeat(32);
    let mut record = cancelled();
    record.system.prompt_hash = Some(hash.clone());
    let asked = EscalationAsked { tool: "sharedos.escalate".into(), reason: "why".into() };
    record.execution.escalation_asked = Some(asked);
    let observed = facts(None, 0);
    let stated = json!({"status": "cancelled", "promptHash": hash, "escalationAsked": {"tool": "sharedos.escalate", "reason": "why"}});
    assert_eq!(grade(stated, &record, &observed).status, CellStatus::Pass);
    let absent = json!({"status": "cancelled", "promptHash": null});
    assert_eq!(grade(absent.clone(), &record, &observed).status, CellStatus::Fail);
    assert_eq!(grade(absent, &cancelled(), &observed).status, CellStatus::Pass, "nothing stated, nothing lifted");
    let other_reason =
        json!({"status": "cancelled", "escalationAsked": {"tool": "sharedos.escalate", "reason": "other"}});
    assert_eq!(grade(other_reason, &record, &observed).status, CellStatus::Fail);
}

#[test]
fn e71_e56_event_counts_are_graded_per_type() {
    let completed = json!({"type": "tool.completed", "data": {}});
    let record = record("failed", Some("audit_unavailable"), Some("envelope"), true, vec![], vec![completed]);
    let one = json!({"status": "failed", "eventCounts": {"tool.completed": 1, "turn.cancelled": 0}});
    assert_eq!(grade(one, &record, &facts(None, 0)).status, CellStatus::Pass);
    let two = json!({"status": "failed", "eventCounts": {"tool.completed": 2}});
    assert_eq!(grade(two, &record, &facts(None, 0)).status, CellStatus::Fail);
}

#[test]
fn ledger_balances_are_graded_from_the_world() {
    let record = cancelled();
    let mut observed = facts(None, 0);
    observed.balances = Some(BTreeMap::from([("account-a".to_string(), 60), ("account-b".to_string(), 0)]));
    let half_done = json!({"status": "cancelled", "balances": {"account-a": 60, "account-b": 0}});
    assert_eq!(grade(half_done, &record, &observed).status, CellStatus::Pass);
    let credited = json!({"status": "cancelled", "balances": {"account-b": 40}});
    assert_eq!(grade(credited.clone(), &record, &observed).status, CellStatus::Fail);
    assert_eq!(grade(credited, &record, &facts(None, 0)).status, CellStatus::Fail, "no ledger, no balance");
}

#[test]
fn e60_activity_after_the_result_fails_a_row_that_requires_quiet() {
    let record = cancelled();
    let quiet = json!({"status": "cancelled", "quietAfter": true});
    assert_eq!(grade(quiet.clone(), &record, &facts(None, 0)).status, CellStatus::Pass);
    let mut busy = facts(None, 0);
    busy.after_result = Some(vec!["1 audit records".to_string()]);
    let judgement = grade(quiet.clone(), &record, &busy);
    assert_eq!(judgement.status, CellStatus::Fail);
    assert!(judgement.detail().unwrap().contains("activity after the result is 1 audit records"));
    let mut unobserved = facts(None, 0);
    unobserved.after_result = None;
    assert_eq!(grade(quiet, &record, &unobserved).status, CellStatus::Fail, "not looking is not quiet");
}

#[test]
fn a_met_ending_names_every_graded_value_and_a_bare_one_reads_as_before() {
    let record = cancelled();
    let judgement = grade(
        json!({"status": "cancelled", "reasonCode": "turn_cancelled", "retryable": true, "endedAtMs": 116000}),
        &record,
        &facts(Some(true), 116_000),
    );
    assert_eq!(
        judgement.detail().unwrap(),
        "the turn ended `cancelled` with `turn_cancelled`, retryable `true`, ended at 116000 ms, as the row requires"
    );
    let bare = grade(json!({"status": "cancelled", "reasonCode": "turn_cancelled"}), &record, &facts(Some(true), 0));
    assert_eq!(bare.detail().unwrap(), "the turn ended `cancelled` with `turn_cancelled`, as the row requires");
}

#[test]
fn a_wrong_status_is_reported_before_any_value() {
    let record = record("succeeded", None, None, true, vec![], vec![]);
    let judgement = grade(
        json!({"status": "cancelled", "reasonCode": "turn_cancelled", "retryable": true}),
        &record,
        &facts(None, 0),
    );
    assert_eq!(judgement.status, CellStatus::Fail);
    assert_eq!(
        judgement.detail().unwrap(),
        "the turn ended `succeeded` where the row requires `cancelled` with `turn_cancelled`"
    );
}

// ---- attempts answered by a rejection, and the refusing boundary ----------

fn transfer_script(expect: Value) -> AttackScript {
    script(
        "family.transfer",
        "drain",
        json!([{"id": "transfer", "role": "probe", "description": "d", "tool": "ledger.transfer",
                "toolArguments": {"from": "account-a", "to": "account-b", "amount": 40}, "expect": expect}]),
        None,
    )
}

fn rejected(script: &AttackScript, code: &str) -> Vec<AttemptReceipt> {
    let value = json!({"moveId": script.id, "kind": script.kind, "attemptId": "transfer", "role": "probe",
                       "attempted": true, "callId": call(script, "transfer"), "argumentKeys": ["amount", "from", "to"],
                       "reasonCode": code, "expect": script.attempts[0].expect});
    vec![AttemptReceipt::from_value(&value).unwrap()]
}

fn attempt_grade(script: &AttackScript, receipts: &[AttemptReceipt], record: &ExecutionRecord) -> AttemptGrade {
    grade_with_facts(script, None, receipts, record, &GradingLimits::default(), &TurnFacts::default())
        .judgement
        .attempts[0]
        .grade
}

#[test]
fn e100_an_interruption_is_believed_only_when_the_record_shows_the_abort() {
    let script = transfer_script(json!({"rejection": "interrupted"}));
    let id = call(&script, "transfer");
    let aborted = record(
        "cancelled",
        Some("turn_cancelled"),
        None,
        true,
        vec![operation(&id, "tool", "kernel", "failed", Some("operation_aborted"), None)],
        vec![],
    );
    assert_eq!(attempt_grade(&script, &rejected(&script, "interrupted"), &aborted), AttemptGrade::Pass);
    let answered = record(
        "cancelled",
        Some("turn_cancelled"),
        None,
        true,
        vec![operation(&id, "tool", "kernel", "succeeded", None, None)],
        vec![],
    );
    assert_eq!(attempt_grade(&script, &rejected(&script, "interrupted"), &answered), AttemptGrade::Fail);
    let nothing = cancelled();
    assert_eq!(attempt_grade(&script, &rejected(&script, "interrupted"), &nothing), AttemptGrade::Fail);
}

#[test]
fn e65_a_rejection_expectation_needs_that_rejection_and_no_tool_result() {
    let script = transfer_script(json!({"rejection": "audit_unavailable"}));
    let record = record("failed", Some("audit_unavailable"), Some("envelope"), true, vec![], vec![]);
    assert_eq!(attempt_grade(&script, &rejected(&script, "audit_unavailable"), &record), AttemptGrade::Pass);
    assert_eq!(attempt_grade(&script, &rejected(&script, "host_closed"), &record), AttemptGrade::Fail);
    let answered = vec![receipt(&script, "transfer", Some("failed"), Some("audit_unavailable"))];
    assert_eq!(attempt_grade(&script, &answered, &record), AttemptGrade::Fail, "a tool result is not a rejection");
}

#[test]
fn e47_e99_the_refusing_boundary_is_read_from_the_record() {
    let script =
        transfer_script(json!({"statuses": ["denied"], "reasonCodes": ["turn_draining"], "refusedBy": "envelope"}));
    let id = call(&script, "transfer");
    let receipts = vec![receipt(&script, "transfer", Some("denied"), Some("turn_draining"))];
    let by_envelope = record(
        "cancelled",
        Some("turn_cancelled"),
        None,
        true,
        vec![operation(&id, "tool", "envelope", "denied", Some("turn_draining"), None)],
        vec![],
    );
    assert_eq!(attempt_grade(&script, &receipts, &by_envelope), AttemptGrade::Pass);
    let by_kernel = record(
        "cancelled",
        Some("turn_cancelled"),
        None,
        true,
        vec![operation(&id, "tool", "kernel", "denied", Some("turn_draining"), None)],
        vec![],
    );
    assert_eq!(attempt_grade(&script, &receipts, &by_kernel), AttemptGrade::Fail);
}

/// Grades the last of `records` with the earlier ones beside it.
fn grade_turns(expected: Value, records: &[ExecutionRecord]) -> Judgement {
    use sharedos_grading::grade::completeness::check_completeness;
    use sharedos_grading::grade::judge::{judge, GradingInput};
    let script = probe_script();
    let receipts = look(&script);
    let (record, earlier_records) = records.split_last().unwrap();
    let expected = expectation(expected);
    judge(&GradingInput {
        script: &script,
        expect_turn: Some(&expected),
        receipts: &receipts,
        record,
        earlier_records,
        completeness: &check_completeness(record),
        limits: &GradingLimits::default(),
        facts: &facts(None, 0),
        host_attempts: &[],
        witness: None,
    })
}

#[test]
fn e93_r10_a_prompt_hash_is_required_on_every_turn_not_only_the_last() {
    let stated = |hash: Option<&str>| {
        let mut record = cancelled();
        record.system.prompt_hash = hash.map(str::to_string);
        record
    };
    let (one, two) = ("ab".repeat(32), "cd".repeat(32));
    let expected = json!({"status": "cancelled", "promptHashStated": true});
    let every = [stated(Some(&one)), stated(Some(&two)), stated(Some(&one))];
    assert_eq!(grade_turns(expected.clone(), &every).status, CellStatus::Pass);
    let dropped_midway = [stated(Some(&one)), stated(None), stated(Some(&one))];
    let judgement = grade_turns(expected.clone(), &dropped_midway);
    assert_eq!(judgement.status, CellStatus::Fail, "an earlier turn's missing hash fails the row");
    let missed = judgement.turn.as_ref().and_then(|t| t.first_missed_value()).unwrap();
    assert_eq!(
        (missed.expected.as_str(), missed.observed.as_str()),
        ("stated on every turn (3 of 3)", "stated on 2 of 3 turns")
    );
    assert_eq!(grade_turns(expected.clone(), &[stated(None)]).status, CellStatus::Fail, "the stalled last turn");
    assert_eq!(grade_turns(expected, &[stated(Some(&two))]).status, CellStatus::Pass);
}
