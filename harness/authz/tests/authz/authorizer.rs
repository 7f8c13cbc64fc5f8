//! The decision walk: validity checks (K11–K14), bounded use (K46–K50), host
//! ceiling (K62–K65), precedence (K60), and the description of missing
//! authority (K80).

use crate::common;

use common::*;
use serde_json::{json, Map, Value};
use sharedos_authz::authority::{PolicyState, ResolvedAuthority};
use sharedos_authz::authorizer::{Authorizer, Explanation, Matcher, Question, Rejection};
use sharedos_authz::memory::{FailingUsage, InMemoryResolver, InMemoryUsage};
use sharedos_authz::ports::{CeilingVerdict, GrantVerifier, HostCeiling, StoreError};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Decision, Grant, Requirement, ResourceRef};
use sharedos_model::codes::ReasonCode;
use std::cell::RefCell;
use std::rc::Rc;

fn reader(id: &str) -> Grant {
    grant(id, vec![files(&["Workspace"], &["read"])])
}

fn bounded(id: &str, uses: u64) -> Grant {
    let mut g = grant(id, vec![files(&["Workspace", "ledger"], &["read", "append"])]);
    g.constraints.max_uses = Some(uses);
    g
}

fn append_ledger() -> Requirement {
    req("files", &["Workspace", "ledger", "entry.md"], "append")
}

fn with_usage(usage: Rc<InMemoryUsage>) -> Authorizer {
    Authorizer { usage: Some(usage), ..Authorizer::default() }
}

/// A scripted host ceiling that records which grants it was shown.
struct Ceiling {
    answer: Box<dyn Fn(&Decision) -> CeilingVerdict>,
    shown: RefCell<Vec<String>>,
    policies: RefCell<Vec<Option<Value>>>,
}

impl Ceiling {
    fn new(answer: impl Fn(&Decision) -> CeilingVerdict + 'static) -> Rc<Ceiling> {
        Rc::new(Ceiling { answer: Box::new(answer), shown: RefCell::default(), policies: RefCell::default() })
    }
    fn deny_grant(id: &'static str) -> Rc<Ceiling> {
        Ceiling::new(move |d| {
            if d.matched_grant_id.as_deref() == Some(id) {
                let mut m = Map::new();
                m.insert("rule".to_string(), json!("frozen-ledger"));
                CeilingVerdict::Deny(Some(m))
            } else {
                CeilingVerdict::Allow(d.clone())
            }
        })
    }
    fn shown(&self) -> Vec<String> {
        self.shown.borrow().clone()
    }
}

impl HostCeiling for Ceiling {
    fn narrow(&self, allowed: &Decision, _: &Requirement, _: &AccessContext, policy: Option<&Value>) -> CeilingVerdict {
        self.shown.borrow_mut().push(allowed.matched_grant_id.clone().unwrap_or_default());
        self.policies.borrow_mut().push(policy.cloned());
        (self.answer)(allowed)
    }
}

fn with_ceiling(ceiling: Rc<Ceiling>) -> Authorizer {
    Authorizer { ceiling: Some(ceiling), ..Authorizer::default() }
}

fn decide(authorizer: &Authorizer, a: &ResolvedAuthority, q: Question<'_>) -> (Decision, Explanation) {
    authorizer.decide(a, q)
}

#[test]
fn k11_unparsable_instants_or_empty_purpose_or_trace_are_invalid_context() {
    let r = read(&["Workspace"]);
    let ok = authority(vec![reader("grant-read")]);
    assert!(Authorizer::default().decide(&ok, invoke(&r)).0.allowed);
    let broken: [fn(&mut ResolvedAuthority); 3] = [
        |a| a.context.now = "not-a-time".to_string(),
        |a| a.context.purpose = String::new(),
        |a| a.context.trace_id = String::new(),
    ];
    for edit in broken {
        let mut a = ok.clone();
        edit(&mut a);
        let (d, e) = Authorizer::default().decide(&a, invoke(&r));
        assert_eq!(d.reason_code, ReasonCode::InvalidContext, "{:?}", a.context);
        assert_eq!(e.grants_resolved, 1);
        assert!(e.rejected_grants.is_empty());
    }
    let bad_instant = Question { operation_at: Some("2026-08-18 09:00"), ..invoke(&r) };
    assert_eq!(Authorizer::default().decide(&ok, bad_instant).0.reason_code, ReasonCode::InvalidContext);
}

#[test]
fn k12_empty_action_or_namespace_or_a_foreign_owner_is_invalid_request() {
    let a = authority(vec![reader("grant-read")]);
    let foreign = Requirement {
        resource: ResourceRef { owner: Some(Address::human("user-mallory")), ..read(&["Workspace"]).resource },
        action: "read".to_string(),
    };
    for r in [req("files", &["Workspace"], ""), req("", &["Workspace"], "read"), foreign] {
        let (d, _) = Authorizer::default().decide(&a, invoke(&r));
        assert_eq!(d.reason_code, ReasonCode::InvalidRequest, "{r:?}");
        assert!(d.required_authority.is_none());
    }
    // Naming the context owner explicitly is not a crossing.
    let own = Requirement {
        resource: ResourceRef { owner: Some(alice()), ..read(&["Workspace"]).resource },
        action: "read".to_string(),
    };
    assert!(Authorizer::default().decide(&a, invoke(&own)).0.allowed);
}

#[test]
fn k13_issuer_subject_and_namespace_must_match_the_context_in_that_order() {
    let mut wrong_issuer = reader("grant-issuer");
    wrong_issuer.issuer = alice();
    wrong_issuer.subject = alice();
    let mut wrong_subject = reader("grant-subject");
    wrong_subject.subject = Address::agent("agent-other");
    let mut wrong_ns = reader("grant-ns");
    wrong_ns.namespace_id = "world-other".to_string();
    let a = authority(vec![wrong_issuer, wrong_subject, wrong_ns]);
    let (d, e) = Authorizer::default().decide(&a, invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
    assert_eq!(
        e.rejected_grants,
        vec![
            ("grant-issuer".to_string(), Rejection::Issuer),
            ("grant-subject".to_string(), Rejection::Subject),
            ("grant-ns".to_string(), Rejection::Namespace),
        ]
    );
    assert_eq!(e.grants_resolved, 3);
}

#[test]
fn k13_a_grant_verifier_refusal_or_failure_rejects_the_grant() {
    struct Verifier(Result<bool, StoreError>);
    impl GrantVerifier for Verifier {
        fn verify(&self, _: &Grant) -> Result<bool, StoreError> {
            self.0.clone()
        }
    }
    let a = authority(vec![reader("grant-read")]);
    let failing = Err(StoreError { store: "verifier", detail: "down".to_string() });
    for answer in [Ok(false), failing] {
        let authorizer = Authorizer { verifier: Some(Rc::new(Verifier(answer))), ..Authorizer::default() };
        let (d, e) = authorizer.decide(&a, invoke(&read(&["Workspace"])));
        assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
        assert_eq!(e.rejected_grants, vec![("grant-read".to_string(), Rejection::Verifier)]);
    }
    let trusting = Authorizer { verifier: Some(Rc::new(Verifier(Ok(true)))), ..Authorizer::default() };
    assert!(trusting.decide(&a, invoke(&read(&["Workspace"]))).0.allowed);
}

#[test]
fn k23_the_first_fully_passing_grant_wins_and_earlier_misses_are_explained() {
    let a = authority(vec![
        grant("grant-write", vec![files(&["Workspace"], &["replace"])]),
        reader("grant-read"),
        reader("grant-read-2"),
    ]);
    let (d, e) = Authorizer::default().decide(&a, invoke(&read(&["Workspace", "policy.md"])));
    assert_eq!(d, Decision::allow("grant-read"));
    assert_eq!(e.rejected_grants, vec![("grant-write".to_string(), Rejection::Capability)]);
}

#[test]
fn k26_discovery_never_consumes_a_bounded_use() {
    let usage = Rc::new(InMemoryUsage::new());
    let a = authority(vec![bounded("grant-ledger", 1)]);
    let ceiling = req("files", &["Workspace"], "append");
    // Even a discovery question that asks to consume does not.
    let eager = Question { consume: true, ..discover(&ceiling) };
    for _ in 0..3 {
        assert!(with_usage(usage.clone()).decide(&a, eager).0.allowed);
    }
    assert_eq!(usage.spent(NS, "grant-ledger"), 0);
    assert!(with_usage(usage.clone()).decide(&a, invoke(&append_ledger())).0.allowed);
    assert_eq!(usage.spent(NS, "grant-ledger"), 1);
}

#[test]
fn k27_a_tool_covered_only_by_an_exhausted_bounded_grant_is_not_discoverable() {
    let usage = Rc::new(InMemoryUsage::new());
    let a = authority(vec![bounded("grant-ledger", 1)]);
    let authorizer = with_usage(usage);
    assert!(authorizer.decide(&a, invoke(&append_ledger())).0.allowed);
    let (d, e) = authorizer.decide(&a, discover(&req("files", &["Workspace"], "append")));
    assert_eq!(d.reason_code, ReasonCode::GrantExhausted);
    assert_eq!(e.rejected_grants, vec![("grant-ledger".to_string(), Rejection::Exhausted)]);
}

#[test]
fn k46_a_bounded_grant_spends_exactly_one_use_per_allowed_consuming_decision() {
    let usage = Rc::new(InMemoryUsage::new());
    let a = authority(vec![bounded("grant-ledger", 2)]);
    let authorizer = with_usage(usage.clone());
    let r = append_ledger();
    assert!(authorizer.decide(&a, peek(&r)).0.allowed);
    assert_eq!(usage.spent(NS, "grant-ledger"), 0, "a bare check spends nothing");
    assert_eq!(authorizer.decide(&a, invoke(&r)).0, Decision::allow("grant-ledger"));
    assert_eq!(usage.spent(NS, "grant-ledger"), 1);
    assert!(authorizer.decide(&a, invoke(&r)).0.allowed);
    assert_eq!(usage.spent(NS, "grant-ledger"), 2);
    assert!(!authorizer.decide(&a, invoke(&r)).0.allowed);
    assert_eq!(usage.spent(NS, "grant-ledger"), 2, "a refused decision spends nothing");
}

#[test]
fn k50_only_consuming_invocation_decisions_spend_uses() {
    let usage = Rc::new(InMemoryUsage::new());
    let authorizer = with_usage(usage.clone());
    let a = authority(vec![bounded("grant-ledger", 5)]);
    let r = append_ledger();
    assert!(authorizer.decide(&a, peek(&r)).0.allowed);
    assert!(authorizer.decide(&a, discover(&req("files", &["Workspace"], "append"))).0.allowed);
    assert_eq!(usage.spent(NS, "grant-ledger"), 0);
    assert!(authorizer.decide(&a, invoke(&r)).0.allowed);
    assert_eq!(usage.spent(NS, "grant-ledger"), 1);
}

#[test]
fn k47_a_spent_bounded_grant_is_grant_exhausted_unless_another_grant_allows() {
    let usage = Rc::new(InMemoryUsage::new());
    let authorizer = with_usage(usage);
    let a = authority(vec![bounded("grant-ledger", 1)]);
    let r = append_ledger();
    assert!(authorizer.decide(&a, invoke(&r)).0.allowed);
    let (d, _) = authorizer.decide(&a, invoke(&r));
    assert_eq!(d.reason_code, ReasonCode::GrantExhausted);
    assert!(d.required_authority.is_none());
    assert!(!d.reason_code.is_fail_closed());
    let mut unbounded = bounded("grant-ledger-open", 1);
    unbounded.constraints.max_uses = None;
    let both = authority(vec![bounded("grant-ledger", 1), unbounded]);
    assert_eq!(authorizer.decide(&both, invoke(&r)).0, Decision::allow("grant-ledger-open"));
}

#[test]
fn k48_a_bounded_grant_without_a_usage_store_fails_closed() {
    let a = authority(vec![bounded("grant-ledger", 1)]);
    let (d, e) = Authorizer::default().decide(&a, invoke(&append_ledger()));
    assert_eq!(d.reason_code, ReasonCode::UsageStoreUnavailable);
    assert!(d.reason_code.is_fail_closed());
    assert_eq!(e.missing_dependency, Some("usageStore"));
}

#[test]
fn k48_a_failing_usage_store_fails_closed_but_unbounded_grants_keep_working() {
    let store = Rc::new(FailingUsage::new());
    let authorizer = Authorizer { usage: Some(store.clone()), ..Authorizer::default() };
    let a = authority(vec![bounded("grant-ledger", 1), reader("grant-read")]);
    for q in [invoke(&append_ledger()), peek(&append_ledger())] {
        let (d, e) = authorizer.decide(&a, q);
        assert_eq!(d.reason_code, ReasonCode::UsageStoreUnavailable);
        assert_eq!(e.missing_dependency, None);
    }
    assert_eq!(store.calls(), 2, "consume and peek both reached the store");
    assert_eq!(authorizer.decide(&a, invoke(&read(&["Workspace", "policy.md"]))).0, Decision::allow("grant-read"));
}

#[test]
fn k49_a_host_ceiling_refusal_never_consumes_a_use() {
    let usage = Rc::new(InMemoryUsage::new());
    let ceiling = Ceiling::deny_grant("grant-ledger");
    let authorizer = Authorizer { usage: Some(usage.clone()), ceiling: Some(ceiling), ..Authorizer::default() };
    let a = authority(vec![bounded("grant-ledger", 1)]);
    let (d, _) = authorizer.decide(&a, invoke(&append_ledger()));
    assert_eq!(d.reason_code, ReasonCode::HostPolicyDenied);
    assert_eq!(usage.spent(NS, "grant-ledger"), 0);
}

#[test]
fn k60_denials_rank_unverified_invalid_policy_exhausted_no_match() {
    let usage = Rc::new(InMemoryUsage::new());
    let parent = root("grant-root-files", vec![files(&["Workspace"], &["read", "append"])]);
    let resolver = Rc::new(InMemoryResolver::new([parent.clone()]));
    let authorizer = Authorizer {
        usage: Some(usage.clone()),
        resolver: Some(resolver),
        ceiling: Some(Ceiling::deny_grant("grant-policy")),
        ..Authorizer::default()
    };
    usage.try_consume_all("grant-spent", 1);
    let spent = bounded("grant-spent", 1);
    let policy = grant("grant-policy", vec![files(&["Workspace"], &["append"])]);
    let invalid = child("grant-invalid", &parent, vec![files(&["Workspace"], &["append", "delete"])]);
    let mut unverified = child("grant-unverified", &parent, vec![files(&["Workspace"], &["append"])]);
    unverified.parent_grant_id = Some("grant-root-gone".to_string());
    let miss = grant("grant-miss", vec![files(&["Elsewhere"], &["append"])]);
    let r = append_ledger();
    let ladder = [
        (vec![miss.clone()], ReasonCode::NoMatchingGrant),
        (vec![miss.clone(), spent.clone()], ReasonCode::GrantExhausted),
        (vec![spent.clone(), policy.clone(), miss.clone()], ReasonCode::HostPolicyDenied),
        (vec![spent.clone(), policy.clone(), invalid.clone()], ReasonCode::DelegationChainInvalid),
        (
            vec![invalid.clone(), policy.clone(), unverified.clone(), spent.clone()],
            ReasonCode::DelegationChainUnverified,
        ),
    ];
    for (grants, expected) in ladder {
        let mut reversed = grants.clone();
        reversed.reverse();
        for order in [grants, reversed] {
            let (d, _) = authorizer.decide(&authority(order.clone()), invoke(&r));
            assert_eq!(d.reason_code, expected, "{:?}", order.iter().map(|g| &g.id).collect::<Vec<_>>());
        }
    }
}

trait SpendAll {
    fn try_consume_all(&self, grant_id: &str, uses: u64);
}
impl SpendAll for InMemoryUsage {
    fn try_consume_all(&self, grant_id: &str, uses: u64) {
        use sharedos_authz::ports::UsageStore;
        while self.try_consume(NS, grant_id, uses).unwrap() {}
    }
}

#[test]
fn k62_the_ceiling_is_consulted_per_matching_grant_after_chain_validation() {
    let ceiling = Ceiling::new(|d| CeilingVerdict::Allow(d.clone()));
    let parent = root("grant-root-files", vec![files(&["Workspace"], &["read"])]);
    let widened = child("grant-widened", &parent, vec![files(&["Workspace"], &["read", "delete"])]);
    let authorizer = Authorizer {
        resolver: Some(Rc::new(InMemoryResolver::new([parent]))),
        ceiling: Some(ceiling.clone()),
        ..Authorizer::default()
    };
    let a =
        authority(vec![grant("grant-write", vec![files(&["Workspace"], &["replace"])]), widened, reader("grant-read")]);
    assert_eq!(authorizer.decide(&a, invoke(&read(&["Workspace"]))).0, Decision::allow("grant-read"));
    assert_eq!(
        ceiling.shown(),
        vec!["grant-read".to_string()],
        "neither the non-matching nor the invalid-chain grant is shown"
    );
    assert_eq!(authorizer.decide(&a, discover(&read(&[]))).0, Decision::allow("grant-read"));
    assert_eq!(ceiling.shown().len(), 2, "discovery consults the ceiling too");
}

#[test]
fn k63_a_ceiling_refusal_of_every_match_is_host_policy_denied_naming_the_grant() {
    let ceiling = Ceiling::deny_grant("grant-read");
    let a = authority(vec![reader("grant-read")]);
    let (d, _) = decide(&with_ceiling(ceiling), &a, invoke(&read(&["Workspace", "ledger", "entry.md"])));
    assert_eq!(d.reason_code, ReasonCode::HostPolicyDenied);
    assert!(!d.allowed);
    assert_eq!(d.matched_grant_id.as_deref(), Some("grant-read"));
    assert_eq!(d.metadata, Some(Map::from_iter([("rule".to_string(), json!("frozen-ledger"))])));
    assert!(d.required_authority.is_none());
    assert!(!d.reason_code.is_fail_closed());
}

#[test]
fn k63_with_several_refused_grants_the_first_overridden_grant_is_named() {
    let ceiling = Ceiling::new(|d| {
        CeilingVerdict::Deny(Some(Map::from_iter([("grant".to_string(), json!(d.matched_grant_id))])))
    });
    let a = authority(vec![reader("grant-read"), reader("grant-read-2")]);
    let (d, _) = decide(&with_ceiling(ceiling.clone()), &a, invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::HostPolicyDenied);
    assert_eq!(d.matched_grant_id.as_deref(), Some("grant-read"));
    assert_eq!(d.metadata.unwrap()["grant"], "grant-read");
    assert_eq!(ceiling.shown().len(), 2, "every matching grant is shown before giving up");
}

#[test]
fn k63_a_later_grant_the_ceiling_accepts_still_allows() {
    let ceiling = Ceiling::deny_grant("grant-read");
    let a = authority(vec![reader("grant-read"), reader("grant-read-2")]);
    assert_eq!(decide(&with_ceiling(ceiling), &a, invoke(&read(&["Workspace"]))).0, Decision::allow("grant-read-2"));
}

#[test]
fn k63_a_refusal_dressed_as_a_decision_is_rewritten_to_host_policy_denied() {
    let ceiling = Ceiling::new(|d| {
        let mut refusal = Decision::deny(ReasonCode::NoMatchingGrant);
        refusal.matched_grant_id = d.matched_grant_id.clone();
        refusal.metadata = Some(Map::from_iter([("why".to_string(), json!("ledger"))]));
        CeilingVerdict::Allow(refusal)
    });
    let a = authority(vec![reader("grant-read")]);
    let (d, _) = decide(&with_ceiling(ceiling), &a, invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::HostPolicyDenied, "the ceiling's own code is ignored");
    assert_eq!(d.matched_grant_id.as_deref(), Some("grant-read"));
    assert_eq!(d.metadata.unwrap()["why"], "ledger");
}

#[test]
fn k64_a_malfunctioning_or_widening_ceiling_is_host_policy_unavailable() {
    let other = Ceiling::new(|_| CeilingVerdict::Allow(Decision::allow("grant-other")));
    let anonymous =
        Ceiling::new(|_| CeilingVerdict::Allow(Decision { matched_grant_id: None, ..Decision::allow("x") }));
    let broken = Ceiling::new(|_| CeilingVerdict::Malfunction);
    let a = authority(vec![reader("grant-read"), reader("grant-read-2")]);
    for ceiling in [other, anonymous, broken] {
        let (d, _) = decide(&with_ceiling(ceiling.clone()), &a, invoke(&read(&["Workspace"])));
        assert_eq!(d.reason_code, ReasonCode::HostPolicyUnavailable);
        assert!(d.reason_code.is_fail_closed());
        assert_eq!(ceiling.shown().len(), 1, "the decision ends at the first malfunction");
    }
}

#[test]
fn k64_ceiling_metadata_on_an_allow_is_kept() {
    let ceiling = Ceiling::new(|d| {
        CeilingVerdict::Allow(Decision {
            metadata: Some(Map::from_iter([("rule".to_string(), json!("ok"))])),
            ..d.clone()
        })
    });
    let a = authority(vec![reader("grant-read")]);
    let (d, _) = decide(&with_ceiling(ceiling), &a, invoke(&read(&["Workspace"])));
    assert!(d.allowed);
    assert_eq!(d.matched_grant_id.as_deref(), Some("grant-read"));
    assert_eq!(d.metadata.unwrap()["rule"], "ok");
}

#[test]
fn k65_a_turn_whose_policy_failed_refuses_every_ceiling_decision() {
    let ceiling = Ceiling::new(|d| CeilingVerdict::Allow(d.clone()));
    let a = authority_with(vec![reader("grant-read")], PolicyState::Unavailable);
    let (d, _) = decide(&with_ceiling(ceiling.clone()), &a, invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::HostPolicyUnavailable);
    assert!(ceiling.shown().is_empty(), "the ceiling is not asked without its policy");
    // Without a ceiling the failed policy changes nothing.
    assert!(Authorizer::default().decide(&a, invoke(&read(&["Workspace"]))).0.allowed);
    // Nothing matching: the policy is never needed.
    let (d, _) = decide(&with_ceiling(ceiling), &a, invoke(&req("files", &["Workspace"], "delete")));
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
}

#[test]
fn k65_a_loaded_policy_is_handed_to_the_ceiling() {
    let ceiling = Ceiling::new(|d| CeilingVerdict::Allow(d.clone()));
    let policy = PolicyState::Loaded { policy: json!({"frozen": ["ledger"]}), version: "v1".to_string() };
    let a = authority_with(vec![reader("grant-read")], policy);
    assert!(decide(&with_ceiling(ceiling.clone()), &a, invoke(&read(&["Workspace"]))).0.allowed);
    assert_eq!(ceiling.policies.borrow().clone(), vec![Some(json!({"frozen": ["ledger"]}))]);
}

#[test]
fn k66_a_tool_the_ceiling_refuses_at_its_declared_requirement_is_not_discoverable() {
    let ceiling = Ceiling::deny_grant("grant-scratch");
    let a = authority(vec![grant("grant-scratch", vec![files(&["Workspace", "scratch"], &["replace"])])]);
    let (d, _) = decide(&with_ceiling(ceiling), &a, discover(&req("files", &["Workspace"], "replace")));
    assert_eq!(d.reason_code, ReasonCode::HostPolicyDenied);
    assert!(d.required_authority.is_none());
}

fn describing(r: &Requirement) -> Question<'_> {
    Question { describe_missing: true, ..invoke(r) }
}

#[test]
fn k80_required_authority_describes_an_invocation_no_matching_grant() {
    let a = authority(vec![reader("grant-read")]);
    let r = req("files", &["Workspace", "policy.md"], "replace");
    let (d, _) = Authorizer::default().decide(&a, describing(&r));
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
    let request = d.required_authority.expect("described");
    assert!(request.id.starts_with("capreq-"));
    assert_eq!(request.namespace_id, NS);
    assert_eq!(request.requester, mallory());
    assert_eq!(request.owner, alice());
    assert_eq!(request.purpose, PURPOSE);
    assert_eq!(request.requested_at, NOW);
    assert_eq!(request.capabilities.len(), 1);
    assert_eq!(request.capabilities[0].actions, vec!["replace".to_string()]);
    assert_eq!(request.capabilities[0].resource, r.resource);
    assert_eq!(serde_json::to_value(request.capabilities[0].scope).unwrap(), json!("exact"));
}

#[test]
fn k80_required_authority_is_absent_from_discovery_other_codes_and_undescribed_asks() {
    let a = authority(vec![reader("grant-read")]);
    let r = req("files", &["Workspace"], "replace");
    assert!(Authorizer::default().decide(&a, invoke(&r)).0.required_authority.is_none());
    let discovery = Question { matcher: Matcher::Discovery, ..describing(&r) };
    let (d, _) = Authorizer::default().decide(&a, discovery);
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
    assert!(d.required_authority.is_none());
    let usage = Rc::new(InMemoryUsage::new());
    let spent = authority(vec![bounded("grant-ledger", 1)]);
    let ledger = append_ledger();
    assert!(with_usage(usage.clone()).decide(&spent, describing(&ledger)).0.allowed);
    let (d, _) = with_usage(usage).decide(&spent, describing(&ledger));
    assert_eq!(d.reason_code, ReasonCode::GrantExhausted);
    assert!(d.required_authority.is_none());
}

#[test]
fn k80_required_authority_is_identical_for_absent_and_unreachable_paths_and_across_turns() {
    let r = req("files", &["Workspace", "ghost.md"], "read");
    let nothing = authority(vec![]);
    let near_miss = authority(
        vec![reader("grant-elsewhere")]
            .into_iter()
            .map(|mut g| {
                g.capabilities[0].resource.path = path(&["Workspace", "scratch"]);
                g
            })
            .collect(),
    );
    let mut next_turn = nothing.clone();
    next_turn.context.now = "2026-08-18T10:00:00.000Z".to_string();
    let describe =
        |a: &ResolvedAuthority| Authorizer::default().decide(a, describing(&r)).0.required_authority.unwrap();
    let first = describe(&nothing);
    assert_eq!(first, describe(&near_miss));
    let later = describe(&next_turn);
    assert_eq!(later.id, first.id, "the id does not depend on requestedAt");
    assert_ne!(later.requested_at, first.requested_at);
    let other = req("files", &["Workspace", "ghost-2.md"], "read");
    let (d, _) = Authorizer::default().decide(&nothing, describing(&other));
    assert_ne!(d.required_authority.unwrap().id, first.id, "a different ask has a different id");
}
