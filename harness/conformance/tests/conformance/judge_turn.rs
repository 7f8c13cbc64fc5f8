//! The grading rules with a turn expectation, and cell assembly
//! (R41–R45; the changes of each version are in `docs/rules/versions.md`).

use crate::judging;

use judging::*;
use serde_json::json;
use sharedos_grading::grade::judge::attempt::AttemptGrade;
use sharedos_grading::grade::judge::cell::{assemble_cell, declared_cell};
use sharedos_grading::grade::judge::finding::Finding;
use sharedos_grading::input::script::AttackScript;
use sharedos_grading::vocab::{CellStatus, GradingLimits};
use sharedos_model::audit::Source;
use sharedos_model::execution::ExecutionStatus;

// ---- case status with a turn expectation (R41–R43) ----

#[test]
fn r41_a_turn_refused_before_the_runtime_started_passes_on_its_ending_alone() {
    let s = script("m", "authority_unavailable", json!([attack("a"), attack("b"), attack("c")]), None);
    let rec = record("denied", Some("authority_unavailable"), None, false, vec![], vec![]);
    let graded = grade_with(
        &s,
        expect_turn(ExecutionStatus::Denied, Some("authority_unavailable")),
        &[],
        &rec,
        &GradingLimits::default(),
    );
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
    let graded = grade_with(
        &s,
        expect_turn(ExecutionStatus::Denied, Some("authority_unavailable")),
        &[],
        &wrong,
        &GradingLimits::default(),
    );
    assert_eq!(graded.judgement.status, CellStatus::Fail);
}

#[test]
fn r42_a_started_turn_needs_its_controls_its_attacks_and_its_ending() {
    let s = script("m", "runtime_crashed", json!([control("c")]), Some(json!({"type": "crash", "reason": "stop"})));
    let expected = expect_turn(ExecutionStatus::Failed, Some("runtime_failed"));
    let ended = record(
        "failed",
        Some("runtime_failed"),
        Some("envelope"),
        true,
        vec![operation(&call(&s, "c"), "tool", "kernel", "succeeded", None, None)],
        vec![],
    );
    let ok = grade_with(
        &s,
        expected.clone(),
        &[receipt(&s, "c", Some("succeeded"), None)],
        &ended,
        &GradingLimits::default(),
    );
    assert_eq!(ok.judgement.status, CellStatus::Pass);

    let control_denied = grade_with(
        &s,
        expected.clone(),
        &[receipt(&s, "c", Some("denied"), Some("no_matching_grant"))],
        &ended,
        &GradingLimits::default(),
    );
    assert_eq!(control_denied.judgement.status, CellStatus::NotExercised);

    let completed = record("succeeded", None, None, true, vec![], vec![]);
    let wrong_ending =
        grade_with(&s, expected, &[receipt(&s, "c", Some("succeeded"), None)], &completed, &GradingLimits::default());
    assert_eq!(wrong_ending.judgement.status, CellStatus::Fail, "a crash is never treated as unasked");
    assert!(matches!(wrong_ending.judgement.finding, Some(Finding::TurnEndedWrongly { .. })));
}

#[test]
fn a_turn_graded_row_fails_when_an_attack_missed_even_if_the_turn_never_started() {
    let s = script("m", "authority_unavailable", json!([attack("a")]), None);
    let rec = record("denied", Some("authority_unavailable"), None, false, vec![], vec![]);
    let graded = grade_with(
        &s,
        expect_turn(ExecutionStatus::Denied, Some("authority_unavailable")),
        &[receipt(&s, "a", Some("succeeded"), None)],
        &rec,
        &GradingLimits::default(),
    );
    assert_eq!(graded.judgement.status, CellStatus::Fail);
}

fn escalation_script() -> AttackScript {
    let mut reach = attempt("reach", "attack", &["denied"], Some(&["tool_unavailable"]));
    reach["tool"] = json!("admin.grant.issue");
    script(
        "m",
        "escalation_recorded",
        json!([reach, control("c")]),
        Some(json!({"type": "escalate", "reason": "needs a human"})),
    )
}

#[test]
fn r43_an_escalation_row_that_never_asked_is_not_exercised() {
    let s = escalation_script();
    let receipts =
        [receipt(&s, "reach", Some("denied"), Some("tool_unavailable")), receipt(&s, "c", Some("succeeded"), None)];
    let completed = record("succeeded", None, None, true, vec![], vec![]);
    let graded = grade_with(
        &s,
        expect_turn(ExecutionStatus::Escalated, Some("escalation_requested")),
        &receipts,
        &completed,
        &GradingLimits::default(),
    );
    assert_eq!(graded.judgement.status, CellStatus::NotExercised);
    assert_eq!(
        graded.judgement.detail().as_deref(),
        Some("the turn ended `succeeded` where the row requires `escalated` with `escalation_requested`; nothing named or announced `sharedos.escalate`, so that ending was never asked for")
    );
}

#[test]
fn r43_an_escalation_row_that_asked_and_did_not_end_escalated_fails() {
    let s = escalation_script();
    let receipts =
        [receipt(&s, "reach", Some("denied"), Some("tool_unavailable")), receipt(&s, "c", Some("succeeded"), None)];
    let expected = expect_turn(ExecutionStatus::Escalated, Some("escalation_requested"));
    let mut named = operation("x.escalate", "tool", "envelope", "denied", Some("tool_unavailable"), None);
    named["tool"] = json!("sharedos.escalate");
    let by_call = record("succeeded", None, None, true, vec![named], vec![]);
    let announcement =
        json!({"type": "runtime.event", "data": {"runtime": {"id": "r"}, "type": "escalation.asked", "data": {}}});
    let by_announcement = record("succeeded", None, None, true, vec![], vec![announcement]);
    let mut by_claim = record("succeeded", None, None, true, vec![], vec![]);
    by_claim.execution.escalation_asked =
        Some(serde_json::from_value(json!({"tool": "sharedos.escalate", "reason": "r"})).unwrap());
    for rec in [by_call, by_announcement, by_claim] {
        let graded = grade_with(&s, expected.clone(), &receipts, &rec, &GradingLimits::default());
        assert_eq!(graded.judgement.status, CellStatus::Fail);
    }
}

#[test]
fn r44_a_met_ending_credits_the_boundary_that_ended_it() {
    let s = escalation_script();
    let receipts =
        [receipt(&s, "reach", Some("denied"), Some("tool_unavailable")), receipt(&s, "c", Some("succeeded"), None)];
    let escalated = record("escalated", Some("escalation_requested"), None, true, vec![], vec![]);
    let graded = grade_with(
        &s,
        expect_turn(ExecutionStatus::Escalated, Some("escalation_requested")),
        &receipts,
        &escalated,
        &GradingLimits::default(),
    );
    assert_eq!(graded.judgement.status, CellStatus::Pass);
    let c = cell(&graded, 1);
    assert!(c.refused_by.is_empty(), "an escalation credits nobody");
    assert_eq!(c.reason_codes, vec!["escalation_requested", "tool_unavailable"]);

    let crash = script("m", "runtime_crashed", json!([control("c")]), Some(json!({"type": "crash", "reason": "stop"})));
    for (ended_by, credited) in [("envelope", vec![Source::Envelope]), ("runtime", vec![])] {
        let rec = record("failed", Some("runtime_failed"), Some(ended_by), true, vec![], vec![]);
        let graded = grade_with(
            &crash,
            expect_turn(ExecutionStatus::Failed, Some("runtime_failed")),
            &[receipt(&crash, "c", Some("succeeded"), None)],
            &rec,
            &GradingLimits::default(),
        );
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

// ---- cell assembly (R44, R45) ----

#[test]
fn r45_driver_issued_lists_only_attempts_actually_issued_in_declared_order() {
    let mut over = attempt("over", "attack", &["denied"], Some(&["step_limit_exceeded"]));
    over["overBudget"] = json!(true);
    let s = script("m", "budget_exceeded", json!([control("c"), over]), None);
    let limits = GradingLimits {
        driver_issued: [
            ("over".to_string(), "the loop cannot pass its own limit".to_string()),
            ("c".to_string(), "x".to_string()),
        ]
        .into(),
        ..GradingLimits::default()
    };
    let receipts = [receipt(&s, "c", None, None), receipt(&s, "over", Some("denied"), Some("step_limit_exceeded"))];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &limits);
    assert_eq!(graded.judgement.driver_issued, vec!["over"]);
}

#[test]
fn r46_an_out_of_scope_column_keeps_its_evidence_and_takes_the_reason() {
    let s = script("m", "budget_exceeded", json!([attack("a")]), None);
    let graded = grade_with(
        &s,
        None,
        &[receipt(&s, "a", Some("denied"), Some("no_matching_grant"))],
        &plain_record(),
        &GradingLimits::default(),
    );
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
