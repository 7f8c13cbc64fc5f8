//! Turning a grant source's answer into a turn's authority (K4, K10).

use crate::common;

use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};
use sharedos_authz::authority::{
    resolve_authority, snapshot, AuthorityResolution, PolicyState, UnavailableCause, MAX_GRANTS,
};
use sharedos_model::address::Address;
use sharedos_model::canonical::is_content_hash;
use sharedos_model::capability::Grant;
use std::rc::Rc;

fn reader(id: &str) -> Grant {
    grant(id, vec![files(&["Workspace"], &["read"])])
}

fn as_value(grants: &[Grant]) -> Value {
    serde_json::to_value(grants).unwrap()
}

fn cause(resolution: AuthorityResolution) -> Option<UnavailableCause> {
    match resolution {
        AuthorityResolution::Resolved(_) => None,
        AuthorityResolution::Unavailable(cause) => Some(cause),
    }
}

#[test]
fn k4_a_well_formed_answer_resolves_with_grants_in_store_order() {
    let grants = vec![reader("grant-b"), reader("grant-a")];
    let policy = PolicyState::Loaded { policy: json!({}), version: "v1".to_string() };
    match resolve_authority(&ctx(), Ok(as_value(&grants)), policy.clone()) {
        AuthorityResolution::Resolved(a) => {
            assert_eq!(a.grants, grants.into_iter().map(Rc::new).collect::<Vec<_>>());
            assert_eq!(a.context, ctx());
            assert_eq!(a.policy, policy);
            assert_eq!(a.snapshot.grant_ids, vec!["grant-a".to_string(), "grant-b".to_string()]);
            assert_eq!(a.snapshot.loaded_at, NOW);
        }
        AuthorityResolution::Unavailable(c) => panic!("unavailable: {}", c.as_str()),
    }
    assert!(cause(resolve(json!([]))).is_none(), "an empty set is authority too");
}

#[test]
fn k4_a_failing_source_or_non_array_answer_is_unavailable() {
    let failed = resolve_authority(&ctx(), Err("store down".to_string()), PolicyState::Absent);
    assert_eq!(cause(failed), Some(UnavailableCause::GrantSourceFailed));
    for answer in [json!({"grants": []}), json!(null), json!("grant-read"), json!(as_value(&[reader("g")])[0])] {
        assert_eq!(cause(resolve(answer)), Some(UnavailableCause::InvalidGrantMaterial));
    }
}

#[test]
fn k4_one_schema_invalid_grant_makes_the_whole_set_unavailable() {
    let good = as_value(&[reader("grant-read")])[0].clone();
    let mutations: Vec<fn(&mut Value)> = vec![
        |g| g["unexpected"] = json!(true),
        |g| g["issuedAt"] = json!("yesterday"),
        |g| g["parentGrantId"] = g["id"].clone(),
        |g| g["capabilities"] = json!([]),
        |g| g["capabilities"][0]["resource"]["path"] = json!([".."]),
        |g| g["capabilities"][0]["resource"]["path"] = json!(["a/b"]),
        |g| g["constraints"]["maxUses"] = json!(0),
        |g| g["constraints"]["notBefore"] = json!("2026-08-19T00:00:00.000Z"),
        |g| {
            g["constraints"]["notBefore"] = json!("2026-08-19T00:00:00.000Z");
            g["constraints"]["expiresAt"] = json!("2026-08-18T00:00:00.000Z");
        },
        |g| g["subject"] = json!({"kind": "robot", "robotId": "r"}),
    ];
    for (i, mutate) in mutations.into_iter().enumerate() {
        let mut bad = good.clone();
        mutate(&mut bad);
        let answer = json!([good.clone(), bad]);
        let expected = if i == 7 { None } else { Some(UnavailableCause::InvalidGrantMaterial) };
        assert_eq!(cause(resolve(answer)), expected, "mutation {i}");
    }
}

#[test]
fn k4_a_grant_outside_the_context_scope_is_never_filtered_out() {
    let edits: [fn(&mut Grant); 3] = [
        |g| g.namespace_id = "world-other".to_string(),
        |g| g.subject = Address::agent("agent-other"),
        |g| g.issuer = alice(),
    ];
    for edit in edits {
        let mut foreign = reader("grant-foreign");
        edit(&mut foreign);
        let answer = as_value(&[reader("grant-read"), foreign]);
        assert_eq!(cause(resolve(answer)), Some(UnavailableCause::GrantScopeMismatch));
    }
}

#[test]
fn k4_more_than_256_grants_is_unavailable() {
    let at_limit: Vec<Grant> = (0..MAX_GRANTS).map(|i| reader(&format!("grant-{i}"))).collect();
    assert_eq!(cause(resolve(as_value(&at_limit))), None);
    let mut over = at_limit;
    over.push(reader("grant-one-too-many"));
    assert_eq!(cause(resolve(as_value(&over))), Some(UnavailableCause::GrantLimitExceeded));
}

#[test]
fn k4_unavailable_causes_have_their_audit_spellings() {
    let spellings: Vec<&str> = [
        UnavailableCause::GrantSourceFailed,
        UnavailableCause::InvalidGrantMaterial,
        UnavailableCause::GrantScopeMismatch,
        UnavailableCause::GrantLimitExceeded,
    ]
    .iter()
    .map(|c| c.as_str())
    .collect();
    assert_eq!(
        spellings,
        ["grant_source_failed", "invalid_grant_material", "grant_scope_mismatch", "grant_limit_exceeded"]
    );
}

#[test]
fn k4_proto_keys_are_dropped_before_the_strict_parse() {
    let mut g = as_value(&[reader("grant-read")])[0].clone();
    g["__proto__"] = json!({"polluted": true});
    assert_eq!(cause(resolve(json!([g]))), None);
}

#[test]
fn k10_snapshot_names_sorted_ids_count_and_load_instant() {
    let s = snapshot(&[reader("grant-b"), reader("grant-a"), reader("grant-c")], NOW);
    assert!(is_content_hash(&s.hash));
    assert_eq!(s.grant_ids, vec!["grant-a", "grant-b", "grant-c"]);
    assert_eq!(s.grant_count, 3);
    assert_eq!(s.loaded_at, NOW);
}

#[test]
fn k10_snapshot_hash_changes_with_content_but_not_with_load_instant() {
    let base = snapshot(&[reader("grant-a")], NOW);
    assert_eq!(base.hash, snapshot(&[reader("grant-a")], LATER).hash);
    let mut revoked = reader("grant-a");
    revoked.revoked_at = Some(LATER.to_string());
    assert_ne!(base.hash, snapshot(&[revoked], NOW).hash);
    assert_ne!(base.hash, snapshot::<Grant>(&[], NOW).hash);
    assert_ne!(base.hash, snapshot(&[reader("grant-a"), reader("grant-a")], NOW).hash);
}

fn arbitrary_grant() -> impl Strategy<Value = Grant> {
    ("[a-e]{1,3}", "[a-z]{1,5}", proptest::option::of(1u64..5)).prop_map(|(id, seg, uses)| {
        let mut g = grant(&format!("grant-{id}"), vec![files(&[seg.as_str()], &["read"])]);
        g.constraints.max_uses = uses;
        g
    })
}

proptest! {
    #[test]
    fn k10_snapshot_hash_is_independent_of_grant_order(grants in proptest::collection::vec(arbitrary_grant(), 0..8), seed in any::<u64>()) {
        let mut shuffled = grants.clone();
        // A deterministic permutation driven by the seed.
        let n = shuffled.len();
        for i in (1..n).rev() {
            let j = usize::try_from(seed.rotate_left(u32::try_from(i).unwrap()) % u64::try_from(i + 1).unwrap()).unwrap();
            shuffled.swap(i, j);
        }
        shuffled.reverse();
        let a = snapshot(&grants, NOW);
        let b = snapshot(&shuffled, NOW);
        prop_assert_eq!(a, b);
    }
}
