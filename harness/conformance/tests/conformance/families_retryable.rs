//! The retryable rows: every worked example W1–W22 of the retryable rule
//! and the endings that carry no `retryable` (E84), run against the
//! reference envelope, each checked against the value the table states —
//! written out here independently of the case files.

use crate::support;

use support::{adversary_run, committed_suite};

use serde_json::{json, Value};
use sharedos_grading::input::loader::Suite;

fn suite() -> Suite {
    committed_suite()
}

/// The ending of the only condition of `case`, run in the Adversary column.
fn ending(suite: &Suite, case: &str) -> Value {
    let found = suite.case(case).unwrap_or_else(|| panic!("no case {case}"));
    let condition = &found.conditions[0];
    let run = adversary_run(suite, case, &condition.id);
    assert_eq!(run.cell.status.as_str(), "pass", "{case}: {:?}", run.cell.detail);
    let turn = &run.snapshot.value()["turns"][0];
    json!({"status": turn["status"], "code": turn["code"], "retryable": turn["retryable"]})
}

fn expect(suite: &Suite, case: &str, status: &str, code: &str, retryable: Value) {
    assert_eq!(ending(suite, case), json!({"status": status, "code": code, "retryable": retryable}), "{case}");
}

#[test]
fn w1_w2_w3_w4_a_deadline_offers_a_retry_only_when_no_write_may_have_run() {
    let s = suite();
    expect(&s, "retryable-w01-read-then-deadline", "cancelled", "turn_cancelled", json!(true));
    expect(&s, "retryable-w02-idempotent-write-then-deadline", "cancelled", "turn_cancelled", json!(true));
    expect(&s, "retryable-w03-write-then-deadline", "cancelled", "turn_cancelled", json!(false));
    expect(&s, "retryable-w04-write-in-the-handler-at-the-deadline", "cancelled", "turn_cancelled", json!(false));
}

#[test]
fn w5_a_runtime_throw_offers_a_retry_only_after_reads() {
    let s = suite();
    expect(&s, "retryable-w05-throw-after-a-transfer", "failed", "runtime_failed", json!(false));
    expect(&s, "retryable-w05-throw-after-a-lookup", "failed", "runtime_failed", json!(true));
}

#[test]
fn w6_w7_w20_e81_a_runtime_claim_is_downgraded_never_raised() {
    let s = suite();
    expect(&s, "retryable-w06-plugin-true-after-a-transfer", "failed", "harness_failed", json!(false));
    expect(&s, "retryable-w06-plugin-true-after-a-lookup", "failed", "harness_failed", json!(true));
    expect(&s, "retryable-w07-plugin-false-is-never-raised", "failed", "harness_failed", json!(false));
    expect(&s, "retryable-w07-plugin-absence-is-never-raised", "failed", "harness_failed", Value::Null);
    expect(&s, "retryable-w20-driver-fails-after-a-write", "failed", "driver_failed", json!(false));
}

#[test]
fn w8_w9_w21_w22_the_drain_rows_carry_their_retryable() {
    let s = suite();
    expect(&s, "drain-new-call-refused", "cancelled", "turn_cancelled", json!(true));
    expect(&s, "drain-in-flight-call-completes", "cancelled", "turn_cancelled", json!(false));
    expect(&s, "drain-host-cancellation-does-not-drain", "cancelled", "turn_cancelled", json!(false));
    expect(&s, "drain-outage-drains-for-the-grace", "failed", "audit_unavailable", json!(false));
}

#[test]
fn w10_w11_w12_w13_w14_e83_an_outage_offers_a_retry_only_when_nothing_ran() {
    let s = suite();
    expect(&s, "retryable-w10-outage-before-anything-ran", "failed", "audit_unavailable", json!(true));
    expect(&s, "retryable-w11-outage-after-a-write-succeeded", "failed", "audit_unavailable", json!(false));
    expect(&s, "retryable-w12-outage-with-a-write-in-the-handler", "failed", "audit_unavailable", json!(false));
    expect(&s, "retryable-w14-outage-at-the-catalogue-listing", "failed", "audit_unavailable", json!(true));
}

#[test]
fn w15_w16_w17_w18_e79_e80_e82_which_calls_count() {
    let s = suite();
    expect(&s, "retryable-w15-write-denied-by-the-kernel", "cancelled", "turn_cancelled", json!(true));
    expect(&s, "retryable-w16-write-answered-failed", "cancelled", "turn_cancelled", json!(false));
    expect(&s, "retryable-w17-envelope-refused-write", "failed", "runtime_failed", json!(true));
    expect(&s, "retryable-w18-the-kernel-definition-decides", "cancelled", "turn_cancelled", json!(false));
}

#[test]
fn w19_e56_a_pre_aborted_turn_offers_a_retry_with_no_events() {
    let s = suite();
    expect(&s, "retryable-w19-host-signal-already-aborted", "cancelled", "turn_cancelled", json!(true));
}

#[test]
fn e84_invalid_outcomes_ungranted_escalations_and_denials_carry_no_retryable() {
    let s = suite();
    expect(&s, "retryable-e84-invalid-outcome-carries-none", "failed", "invalid_runtime_outcome", Value::Null);
    expect(&s, "retryable-e84-denied-turn-carries-none", "denied", "no_matching_grant", Value::Null);
    expect(&s, "annotate-escalation-asked-without-the-affordance", "failed", "tool_unavailable", Value::Null);
}
