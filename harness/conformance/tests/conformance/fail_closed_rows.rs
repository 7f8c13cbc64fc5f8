//! The fail-closed rows, run in the Adversary column: each broken
//! dependency or misused affordance ends on its own code, and the control
//! beside it still works.

use crate::support::{adversary_run, committed_suite};
use sharedos_grading::input::case::Family;
use sharedos_grading::input::loader::Suite;

/// The cell's verdict and reason codes, for the case's only condition.
fn graded(suite: &Suite, case: &str) -> (String, Vec<String>) {
    let condition = suite.case(case).unwrap_or_else(|| panic!("no case {case}")).conditions[0].id.clone();
    let run = adversary_run(suite, case, &condition);
    (run.cell.status.as_str().to_string(), run.cell.reason_codes)
}

fn passes_with(case: &str, codes: &[&str]) {
    let (status, observed) = graded(&committed_suite(), case);
    assert_eq!((status.as_str(), observed), ("pass", codes.iter().map(|c| c.to_string()).collect()), "{case}");
}

#[test]
fn k34_a_call_under_another_trace_is_denied_trace_mismatch() {
    passes_with("fail-closed-trace-mismatch", &["trace_mismatch"]);
}

#[test]
fn e43_the_escalation_affordance_forwarded_as_a_tool_fails_escalation_not_terminated() {
    passes_with("fail-closed-escalation-forwarded", &["escalation_not_terminated"]);
}

#[test]
fn k31_a_failing_provider_leaves_no_catalogue_and_fails_the_call_tool_catalog_unavailable() {
    passes_with("fail-closed-tool-catalogue-unavailable", &["runtime_failed", "tool_catalog_unavailable"]);
}

#[test]
fn a_throwing_handler_fails_its_call_tool_execution_failed() {
    passes_with("fail-closed-handler-throws", &["tool_execution_failed"]);
}

#[test]
fn a_malfunctioning_host_ceiling_denies_host_policy_unavailable() {
    passes_with("fail-closed-host-policy-malfunctions", &["host_policy_unavailable"]);
}

#[test]
fn an_unverifiable_delegation_chain_refuses_the_turn_delegation_chain_unverified() {
    passes_with("fail-closed-delegation-unverified", &["delegation_chain_unverified"]);
}

#[test]
fn the_fail_closed_family_holds_one_script_of_its_kind_per_case() {
    let suite = committed_suite();
    let cases: Vec<_> = suite.cases.iter().filter(|c| c.family == Family::FailClosed).collect();
    assert_eq!(cases.len(), 6);
    for case in cases {
        assert_eq!(suite.script_for(case).unwrap().kind.as_str(), "fail_closed", "{}", case.id);
    }
}
