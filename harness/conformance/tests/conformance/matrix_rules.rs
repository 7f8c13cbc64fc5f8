//! Kernel and envelope rules whose natural test is a whole matrix row: each
//! runs the row's adversary cell against the reference kernel and checks the
//! facts the rule states, not only the verdict.

use crate::support;

use support::{adversary_run, committed_suite};

use sharedos_conformance::suite::cell::CellRun;

fn run(case: &str, condition: &str) -> CellRun {
    adversary_run(&committed_suite(), case, condition)
}

fn turn(run: &CellRun, index: usize) -> serde_json::Value {
    run.snapshot.value()["turns"][index].clone()
}

#[test]
fn k3_grant_shaped_arguments_and_payloads_mint_no_authority() {
    let run = run("forged-grant", "baseline");
    assert_eq!(run.cell.status.as_str(), "pass");
    assert_eq!(run.cell.reason_codes, vec!["no_matching_grant".to_string()]);
    let snapshot = run.snapshot.value();
    let receipts = snapshot["receipts"].as_array().expect("receipts");
    let use_forged = receipts.iter().find(|r| r["attemptId"] == "use-forged-authority").expect("probe receipt");
    assert_eq!(use_forged["observed"], "denied");
}

#[test]
fn k79_an_ungranted_escalation_fails_the_turn_with_no_escalation_record() {
    let run = run("escalation-refused", "escalation-withheld");
    assert_eq!(run.cell.status.as_str(), "pass");
    let ending = turn(&run, 0);
    assert_eq!(ending["status"], "failed");
    assert_eq!(ending["code"], "tool_unavailable");
    assert!(ending["events"].as_array().expect("events").iter().all(|e| e != "turn.escalated"));
}

#[test]
fn k81_m13_an_authority_outage_at_the_turn_boundary_denies_before_the_runtime_starts() {
    let run = run("authority-unavailable", "outage-at-turn-boundary");
    assert_eq!(run.cell.status.as_str(), "pass");
    let ending = turn(&run, 0);
    assert_eq!(ending["status"], "denied");
    assert_eq!(ending["code"], "authority_unavailable");
    assert_eq!(ending["events"], serde_json::json!(["turn.denied"]));
    assert_eq!(run.cell.attempted, 0);
}

#[test]
fn k82_budgets_refuse_the_offending_call_and_let_the_turn_continue() {
    for (condition, code) in
        [("tool-call-ceiling", "tool_call_limit_exceeded"), ("step-ceiling", "step_limit_exceeded")]
    {
        let run = run("budget-exceeded", condition);
        assert_eq!(run.cell.reason_codes, vec![code.to_string()], "{condition}");
        assert_eq!(turn(&run, 0)["status"], "succeeded", "{condition}: the turn continued to its end");
    }
}

#[test]
fn k83_a_runtime_throw_ends_the_turn_runtime_failed_with_earlier_calls_recorded() {
    let run = run("runtime-crashed", "baseline");
    let ending = turn(&run, 0);
    assert_eq!(ending["status"], "failed");
    assert_eq!(ending["code"], "runtime_failed");
    assert_eq!(ending["endedBy"], "envelope");
    let operations = ending["operations"].as_array().expect("operations");
    assert!(operations.iter().any(|o| o["tool"] == "files.read" && o["outcome"] == "succeeded"));
}
