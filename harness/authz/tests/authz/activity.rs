//! Grant activity at a decision's two instants (K15–K18).

use crate::common;

use common::*;
use sharedos_authz::activity::{inactive_reason, is_active, Inactivity, Instants};
use sharedos_authz::authorizer::{Authorizer, ChainMemo, Question, Rejection};
use sharedos_model::capability::Grant;
use sharedos_model::codes::ReasonCode;
use sharedos_model::instant::Instant;

fn at(admitted: &str, now: &str) -> Instants {
    Instants { admitted_at: Instant::parse(admitted).unwrap(), now: Instant::parse(now).unwrap() }
}

fn reader() -> Grant {
    grant("grant-read", vec![files(&["Workspace"], &["read"])])
}

#[test]
fn k14_purpose_must_be_an_exact_member() {
    let g = reader();
    let t = at(NOW, NOW);
    assert_eq!(inactive_reason(&g, PURPOSE, t), None);
    assert_eq!(inactive_reason(&g, "Conformance-probe", t), Some(Inactivity::Purpose));
    assert_eq!(inactive_reason(&g, "conformance", t), Some(Inactivity::Purpose));
    let mut open = g.clone();
    open.constraints.purposes = None;
    assert!(is_active(&open, "anything", t), "no purposes listed means any purpose");
    // Through the authorizer the rejection is named `purpose`.
    let mut a = authority(vec![g]);
    a.context.purpose = "other".to_string();
    let (d, e) = Authorizer::default().decide(&a, invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
    assert_eq!(e.rejected_grants, vec![("grant-read".to_string(), Rejection::Purpose)]);
}

#[test]
fn k15_unparsable_declared_timestamps_make_a_grant_inactive() {
    let t = at(NOW, NOW);
    let edits: [fn(&mut Grant); 4] = [
        |g| g.issued_at = "yesterday".to_string(),
        |g| g.constraints.not_before = Some("soon".to_string()),
        |g| g.constraints.expires_at = Some("2026-08-18T10:00:00".to_string()),
        |g| g.revoked_at = Some("never".to_string()),
    ];
    for edit in edits {
        let mut g = reader();
        edit(&mut g);
        assert_eq!(inactive_reason(&g, PURPOSE, t), Some(Inactivity::Window), "{g:?}");
    }
    assert_eq!(inactive_reason(&reader(), PURPOSE, t), None);
}

#[test]
fn k16_expiry_is_judged_at_the_operation_instant() {
    let mut g = reader();
    g.constraints.expires_at = Some(LATER.to_string());
    assert!(is_active(&g, PURPOSE, at(NOW, NOW)));
    assert_eq!(inactive_reason(&g, PURPOSE, at(NOW, LATER)), Some(Inactivity::Window), "expiry is exclusive");
    // Through the authorizer: allowed at admission, refused at the next call.
    let a = authority(vec![g]);
    let r = read(&["Workspace", "policy.md"]);
    assert!(Authorizer::default().decide(&a, invoke(&r)).0.allowed);
    let later = Question { operation_at: Some(LATER), ..invoke(&r) };
    let (d, e) = Authorizer::default().decide(&a, later);
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
    assert_eq!(e.rejected_grants, vec![("grant-read".to_string(), Rejection::Window)]);
}

#[test]
fn k17_revocation_is_judged_at_admission() {
    let mut g = reader();
    g.revoked_at = Some(LATER.to_string());
    assert!(is_active(&g, PURPOSE, at(NOW, "2026-08-18T09:30:00.000Z")), "revocation mid-turn waits for the next turn");
    assert!(!is_active(&g, PURPOSE, at(LATER, LATER)), "revokedAt == admission is revoked");
    g.revoked_at = Some(EARLIER.to_string());
    assert_eq!(inactive_reason(&g, PURPOSE, at(NOW, NOW)), Some(Inactivity::Window));
}

#[test]
fn k17_a_window_opening_mid_turn_is_not_honoured_until_the_next_turn() {
    let mut g = reader();
    g.constraints.not_before = Some(LATER.to_string());
    assert!(!is_active(&g, PURPOSE, at(NOW, "2026-08-18T09:30:00.000Z")));
    assert!(is_active(&g, PURPOSE, at(LATER, LATER)), "notBefore is inclusive");
    let mut fresh = reader();
    fresh.issued_at = LATER.to_string();
    assert!(!is_active(&fresh, PURPOSE, at(NOW, "2026-08-18T09:30:00.000Z")), "issued after admission");
    assert!(is_active(&fresh, PURPOSE, at(LATER, LATER)));
}

#[test]
fn k17_purpose_is_read_from_the_admission_context() {
    // The decision judges purpose against the context held at admission; the
    // operation instant moves nothing else.
    let a = authority(vec![reader()]);
    let r = read(&["Workspace"]);
    let q = Question { operation_at: Some(LATER), ..invoke(&r) };
    assert!(Authorizer::default().decide(&a, q).0.allowed);
}

#[test]
fn k18_an_earlier_operation_instant_cannot_revive_an_expired_grant() {
    let mut g = reader();
    g.constraints.expires_at = Some(NOW.to_string());
    assert_eq!(inactive_reason(&g, PURPOSE, at(NOW, EARLIER)), Some(Inactivity::Window));
    assert_eq!(at(NOW, EARLIER).expiry_instant(), Instant::parse(NOW).unwrap());
    let a = authority(vec![g]);
    let r = read(&["Workspace"]);
    let backwards = Question { operation_at: Some(EARLIER), ..invoke(&r) };
    assert_eq!(Authorizer::default().decide(&a, backwards).0.reason_code, ReasonCode::NoMatchingGrant);
}

#[test]
fn k18_an_earlier_operation_instant_does_not_open_an_earlier_window() {
    let mut g = reader();
    g.constraints.not_before = Some(NOW.to_string());
    assert!(is_active(&g, PURPOSE, at(NOW, EARLIER)), "notBefore stays judged at admission");
}

#[test]
fn k16_a_batch_judges_each_question_at_its_own_operation_instant() {
    let mut g = reader();
    g.constraints.expires_at = Some(LATER.to_string());
    let a = authority(vec![g]);
    let r = read(&["Workspace", "policy.md"]);
    let memo = ChainMemo::new();
    let authorizer = Authorizer::default();
    // The batch remembers the instants it parsed; a question at another
    // instant, and one back at the first, are each judged at their own.
    for (operation_at, allowed) in [(None, true), (Some(NOW), true), (Some(LATER), false), (Some(NOW), true)] {
        let question = Question { operation_at, ..invoke(&r) };
        let batched = authorizer.decide_in_batch(&a, question, &memo);
        assert_eq!(batched, authorizer.decide(&a, question).0, "{operation_at:?}");
        assert_eq!(batched.allowed, allowed, "{operation_at:?}");
    }
}
