//! The drain rows, run against the reference envelope and kernel: each test
//! checks the facts its rule states in the cell's snapshot, not only the
//! verdict.

use crate::support;

use support::{adversary_run, committed_suite};

use serde_json::{json, Value};
use sharedos_conformance::suite::cell::CellRun;

fn run(case: &str, condition: &str) -> CellRun {
    let run = adversary_run(&committed_suite(), case, condition);
    assert_eq!(run.cell.status.as_str(), "pass", "{case}/{condition}: {:?}", run.cell.detail);
    run
}

fn ending(run: &CellRun) -> Value {
    run.snapshot.value()["turns"][0].clone()
}

fn receipt(run: &CellRun, attempt: &str) -> Value {
    run.snapshot.value()["receipts"].as_array().unwrap().iter().find(|r| r["attemptId"] == attempt).unwrap().clone()
}

fn operation(run: &CellRun, tool: &str) -> Value {
    ending(run)["operations"].as_array().unwrap().iter().find(|o| o["tool"] == tool).unwrap().clone()
}

fn balances(run: &CellRun) -> Value {
    run.snapshot.value()["world"]["ledger"]["balances"].clone()
}

fn count(run: &CellRun, event: &str) -> usize {
    ending(run)["events"].as_array().unwrap().iter().filter(|e| *e == event).count()
}

#[test]
fn e47_w8_a_call_after_the_drain_began_is_refused_by_the_envelope_and_a_retry_is_offered() {
    let run = run("drain-new-call-refused", "grace-five-seconds");
    let refused = operation(&run, "ledger.transfer");
    assert_eq!((refused["outcome"].clone(), refused["source"].clone()), (json!("denied"), json!("envelope")));
    assert_eq!(refused["reasonCode"], "turn_draining");
    assert!(
        ending(&run)["decisions"].as_array().unwrap().iter().all(|d| d["operationId"] != refused["operationId"]),
        "the kernel never decided it"
    );
    assert_eq!((ending(&run)["status"].clone(), ending(&run)["retryable"].clone()), (json!("cancelled"), json!(true)));
    assert_eq!(balances(&run), json!({"account-a": 100, "account-b": 0}));
}

#[test]
fn e48_e49_w9_a_call_inside_its_handler_finishes_and_the_turn_ends_when_it_settles() {
    let run = run("drain-in-flight-call-completes", "grace-five-seconds");
    assert_eq!(receipt(&run, "transfer-before-the-drain")["observed"], "succeeded");
    assert_eq!(count(&run, "tool.completed"), 1);
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:01:57.000Z", "117 s: when the transfer settled, before 120 s");
    assert_eq!(ending(&run)["retryable"], false);
    assert_eq!(balances(&run), json!({"account-a": 60, "account-b": 40}));
}

#[test]
fn e50_e51_w4_a_call_still_running_at_the_limit_is_interrupted_and_the_turn_ends_at_the_limit() {
    let run = run("drain-in-flight-call-interrupted-at-the-deadline", "grace-one-second");
    let cut = operation(&run, "ledger.transfer");
    assert_eq!((cut["outcome"].clone(), cut["reasonCode"].clone()), (json!("failed"), json!("operation_aborted")));
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:02:00.000Z");
    assert_eq!(ending(&run)["retryable"], false);
    assert_eq!(balances(&run), json!({"account-a": 60, "account-b": 0}), "debited, never credited");
}

#[test]
fn e45_with_no_grace_calls_are_mediated_until_the_limit() {
    let run = run("drain-grace-zero-keeps-old-behaviour", "grace-zero");
    assert_eq!(receipt(&run, "quiet-at-119s")["observed"], "succeeded");
    assert_eq!(receipt(&run, "read-at-119s")["observed"], "succeeded");
    assert_eq!(operation(&run, "ledger.balance")["reasonCode"], "operation_aborted");
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:02:00.000Z");
}

#[test]
fn e62_e63_a_grace_as_long_as_the_turn_refuses_every_call() {
    let run = run("drain-grace-not-less-than-the-limit", "grace-equals-limit");
    for tool in ["files.read", "ledger.transfer"] {
        assert_eq!(operation(&run, tool)["reasonCode"], "turn_draining", "{tool}");
    }
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:02:00.000Z", "ended by the limit");
}

#[test]
fn e55_w21_a_host_cancellation_stops_at_once_without_a_grace() {
    let run = run("drain-host-cancellation-does-not-drain", "cancel-at-50s");
    assert_eq!(receipt(&run, "quiet-before-the-cancel")["observed"], "succeeded");
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:00:50.000Z");
    assert_eq!(operation(&run, "ledger.transfer")["reasonCode"], "operation_aborted");
    assert_eq!(ending(&run)["retryable"], false);
}

#[test]
fn e46_e58_e59_draining_fires_at_exactly_the_limit_minus_the_grace_with_the_fixed_reason() {
    let run = run("drain-draining-is-visible-and-fixed", "grace-five-seconds");
    for (attempt, observed) in [
        ("quiet-at-114s", "succeeded"),
        ("quiet-1ms-before", "succeeded"),
        ("fired-at-115s", "denied"),
        ("fired-at-116s", "denied"),
        ("fired-after-close", "denied"),
    ] {
        assert_eq!(receipt(&run, attempt)["observed"], observed, "{attempt}");
        if observed == "denied" {
            assert_eq!(receipt(&run, attempt)["reasonCode"], "turn_draining", "{attempt}");
        }
    }
}

#[test]
fn e52_a_decision_returned_while_draining_is_honoured() {
    let run = run("drain-decision-already-made-is-honoured", "grace-five-seconds");
    assert_eq!(receipt(&run, "draining-at-the-decision")["reasonCode"], "turn_draining");
    assert_eq!(ending(&run)["status"], "succeeded");
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:01:56.000Z");
}

#[test]
fn e54_a_late_result_ends_the_turn_cancelled_not_at_a_step_limit() {
    let run = run("drain-late-result-ends-the-turn", "grace-five-seconds-one-step");
    assert_eq!(
        (ending(&run)["status"].clone(), ending(&run)["code"].clone()),
        (json!("cancelled"), json!("turn_cancelled"))
    );
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:01:55.500Z");
}

#[test]
fn e71_w22_an_outage_drains_and_the_sibling_completes_once() {
    let run = run("drain-outage-drains-for-the-grace", "decision-of-call-two");
    assert_eq!(receipt(&run, "balance-whose-decision-fails")["reasonCode"], "audit_unavailable");
    assert_eq!(receipt(&run, "transfer-before-the-outage")["observed"], "succeeded");
    assert_eq!(count(&run, "tool.completed"), 1);
    assert_eq!(
        (ending(&run)["code"].clone(), ending(&run)["retryable"].clone()),
        (json!("audit_unavailable"), json!(false))
    );
    assert_eq!(ending(&run)["endedAt"], "2026-08-18T09:00:03.000Z");
}

#[test]
fn e60_no_drain_row_leaves_anything_running_after_its_result() {
    let suite = committed_suite();
    for case in suite.cases.iter().filter(|c| c.id.starts_with("drain-")) {
        for condition in &case.conditions {
            assert!(condition.expect_turn.as_ref().unwrap().quiet_after, "{} states quiet after", case.id);
            let run = run(&case.id, &condition.id);
            assert!(run.cell.detail.unwrap().contains("activity after the result nothing"), "{}", case.id);
        }
    }
}
