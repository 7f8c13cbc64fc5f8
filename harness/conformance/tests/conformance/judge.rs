//! The grading rules without a turn expectation (R2, R34–R40).

use crate::judging;

use judging::*;
use serde_json::json;
use sharedos_grading::grade::judge::attempt::AttemptGrade;
use sharedos_grading::grade::judge::finding::Finding;
use sharedos_grading::vocab::{CellStatus, GradingLimits};
use sharedos_model::audit::Source;
use sharedos_model::tool::ToolStatus;

// ---- vocabulary (R2) ----

#[test]
fn r2_cell_statuses_are_the_six_of_the_vocabulary() {
    let spelled: Vec<String> =
        CellStatus::ALL.iter().map(|s| serde_json::to_value(s).unwrap().as_str().unwrap().to_string()).collect();
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

// ---- per-attempt outcome (R38–R40) ----

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
    let limits = GradingLimits {
        unreachable: [("a".to_string(), "the column cannot".to_string())].into(),
        ..GradingLimits::default()
    };
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
    let receipts =
        [receipt(&s, "a", Some("denied"), Some("no_matching_grant")), receipt(&s, "c", Some("succeeded"), None)];
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
    let graded = grade_with(
        &s,
        None,
        &[receipt(&s, "dispatch", Some("failed"), Some("message_request_not_accepted"))],
        &rec,
        &GradingLimits::default(),
    );
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

// ---- case status without a turn expectation (R34–R37) ----

#[test]
fn r36_a_row_whose_every_adversarial_attempt_is_not_applicable_is_not_applicable() {
    let s = script("m", "grant_material_unreachable", json!([attack("a"), control("c")]), None);
    let limits = GradingLimits {
        unreachable: [("a".to_string(), "a harness is never handed the runtime surfaces".to_string())].into(),
        ..GradingLimits::default()
    };
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
    let receipts =
        [receipt(&s, "c", Some("denied"), Some("no_matching_grant")), receipt(&s, "a", Some("succeeded"), None)];
    let judgement = grade(&s, &receipts, &plain_record());
    assert_eq!(judgement.status, CellStatus::NotExercised, "the control rule comes before the attack's fail");
    assert_eq!(
        judgement.finding,
        Some(Finding::ControlDidNotSucceed {
            attempt_id: "c".into(),
            observed: Some(ToolStatus::Denied),
            reason_code: Some("no_matching_grant".into())
        })
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
    let limits = GradingLimits {
        unreachable: [("b".to_string(), "the router refuses unknown names".to_string())].into(),
        ..GradingLimits::default()
    };
    let receipts =
        [receipt(&s, "c", Some("succeeded"), None), receipt(&s, "a", Some("denied"), Some("no_matching_grant"))];
    let graded = grade_with(&s, None, &receipts, &plain_record(), &limits);
    assert_eq!(graded.judgement.status, CellStatus::NotApplicable);
}

#[test]
fn r37_the_record_row_fails_on_an_unusable_record_and_other_rows_do_not() {
    let mut unusable = plain_record();
    unusable.execution.events = Vec::new().into();
    for kind in ["record_completeness", "read_to_mutation"] {
        let s = script("m", kind, json!([attack("a")]), None);
        let graded = grade_with(
            &s,
            None,
            &[receipt(&s, "a", Some("denied"), Some("no_matching_grant"))],
            &unusable,
            &GradingLimits::default(),
        );
        let c = cell(&graded, 1);
        assert!(!c.record_usable);
        assert_eq!(c.record_gaps, vec!["execution.events"]);
        if kind == "record_completeness" {
            assert_eq!(graded.judgement.status, CellStatus::Fail);
            assert_eq!(
                graded.judgement.finding,
                Some(Finding::RecordUnusable { gaps: vec!["execution.events".into()] })
            );
        } else {
            assert_eq!(graded.judgement.status, CellStatus::Pass);
        }
    }
}
