//! Delegation chains at use and derivation at issue (K51–K61).

use crate::common;

use common::*;
use serde_json::json;
use sharedos_authz::activity::Instants;
use sharedos_authz::authorizer::{Authorizer, Rejection};
use sharedos_authz::delegation::{
    derive_grant, validate_chain, ChainVerdict, DeriveRefusal, DeriveRequest, InvalidCode, UnverifiedCode,
    MAX_CHAIN_LINKS,
};
use sharedos_authz::memory::InMemoryResolver;
use sharedos_model::address::Address;
use sharedos_model::capability::{Constraints, Grant, Scope};
use sharedos_model::codes::ReasonCode;
use sharedos_model::instant::Instant;
use sharedos_model::validate::Validate;
use std::rc::Rc;

fn now() -> Instants {
    Instants::at_admission(Instant::parse(NOW).unwrap())
}

fn root_files() -> Grant {
    root("grant-root-files", vec![files(&["Workspace"], &["list", "stat", "read", "search", "grep"])])
}

fn agent_read(parent: &Grant) -> Grant {
    child("grant-read", parent, vec![files(&["Workspace"], &["read"])])
}

fn check(g: &Grant, ancestors: Vec<Grant>) -> ChainVerdict {
    let resolver = InMemoryResolver::new(ancestors);
    validate_chain(g, &ctx(), now(), Some(&resolver), MAX_CHAIN_LINKS)
}

fn invalid(code: InvalidCode, id: &str) -> ChainVerdict {
    ChainVerdict::Invalid { code, grant_id: id.to_string() }
}

fn with_resolver(resolver: InMemoryResolver) -> Authorizer {
    Authorizer { resolver: Some(Rc::new(resolver)), ..Authorizer::default() }
}

#[test]
fn k53_a_root_and_a_valid_chain_pass() {
    let root = root_files();
    assert_eq!(check(&root, vec![]), ChainVerdict::Valid { chain: vec![] });
    let g = agent_read(&root);
    assert_eq!(check(&g, vec![root.clone()]), ChainVerdict::Valid { chain: vec!["grant-root-files".to_string()] });
    let d = with_resolver(InMemoryResolver::new([root]))
        .decide(&authority(vec![g]), invoke(&read(&["Workspace", "policy.md"])))
        .0;
    assert!(d.allowed);
}

#[test]
fn k51_a_derived_grant_without_a_resolver_is_unverified() {
    let g = agent_read(&root_files());
    let verdict = validate_chain(&g, &ctx(), now(), None, MAX_CHAIN_LINKS);
    assert_eq!(
        verdict,
        ChainVerdict::Unverified { code: UnverifiedCode::ResolverUnavailable, grant_id: "grant-read".to_string() }
    );
    let (d, e) = Authorizer::default().decide(&authority(vec![g]), invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::DelegationChainUnverified);
    assert_eq!(d.metadata.unwrap()["delegation"], json!({"code": "resolver_unavailable", "grantId": "grant-read"}));
    assert_eq!(e.missing_dependency, Some("delegationResolver"));
    assert_eq!(e.rejected_grants, vec![("grant-read".to_string(), Rejection::Delegation)]);
}

#[test]
fn k52_a_missing_parent_or_a_failing_resolver_is_unverified() {
    let root = root_files();
    let g = agent_read(&root);
    let empty = InMemoryResolver::default();
    assert_eq!(
        validate_chain(&g, &ctx(), now(), Some(&empty), MAX_CHAIN_LINKS),
        ChainVerdict::Unverified { code: UnverifiedCode::ParentNotFound, grant_id: "grant-read".to_string() }
    );
    let failing = InMemoryResolver::new([root.clone()]);
    failing.set_failing(true);
    assert_eq!(
        validate_chain(&g, &ctx(), now(), Some(&failing), MAX_CHAIN_LINKS),
        ChainVerdict::Unverified { code: UnverifiedCode::ResolverFailed, grant_id: "grant-read".to_string() }
    );
    let broken = InMemoryResolver::new([root]);
    broken.set_failing(true);
    let (d, e) = with_resolver(broken).decide(&authority(vec![g]), invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::DelegationChainUnverified);
    assert_eq!(e.missing_dependency, None, "a resolver is installed; it failed");
    assert!(d.reason_code.is_fail_closed());
}

#[test]
fn k52_a_resolver_answering_with_another_grant_is_not_trusted() {
    struct Liar(Grant);
    impl sharedos_authz::ports::DelegationResolver for Liar {
        fn resolve(&self, _: &str, _: &str) -> Result<Option<Grant>, sharedos_authz::ports::StoreError> {
            Ok(Some(self.0.clone()))
        }
    }
    let root = root_files();
    let mut impostor = root.clone();
    impostor.id = "grant-root-other".to_string();
    let g = agent_read(&root);
    let verdict = validate_chain(&g, &ctx(), now(), Some(&Liar(impostor)), MAX_CHAIN_LINKS);
    assert_eq!(
        verdict,
        ChainVerdict::Unverified { code: UnverifiedCode::ResolverFailed, grant_id: "grant-read".to_string() }
    );
}

#[test]
fn k53_an_ancestor_revoked_before_admission_invalidates_the_child() {
    let root = root_files();
    let g = agent_read(&root);
    let resolver = InMemoryResolver::new([root]);
    assert!(resolver.revoke("grant-root-files", EARLIER));
    let (d, _) = with_resolver(resolver).decide(&authority(vec![g]), invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::DelegationChainInvalid);
    assert_eq!(d.metadata.unwrap()["delegation"], json!({"code": "parent_inactive", "grantId": "grant-root-files"}));
    assert!(!d.reason_code.is_fail_closed());
}

#[test]
fn k53_ancestor_revocation_mid_turn_waits_but_ancestor_expiry_does_not() {
    let mut root = root_files();
    root.constraints.expires_at = Some(LATER.to_string());
    let g = agent_read(&root);
    let instants = |admitted: &str, now: &str| Instants {
        admitted_at: Instant::parse(admitted).unwrap(),
        now: Instant::parse(now).unwrap(),
    };
    let resolver = InMemoryResolver::new([root.clone()]);
    let verdict = |at| validate_chain(&g, &ctx(), at, Some(&resolver), MAX_CHAIN_LINKS);
    assert!(matches!(verdict(instants(NOW, NOW)), ChainVerdict::Valid { .. }));
    assert_eq!(
        verdict(instants(NOW, LATER)),
        invalid(InvalidCode::ParentInactive, "grant-root-files"),
        "expiry at the operation"
    );
    assert_eq!(verdict(instants(NOW, EARLIER)), ChainVerdict::Valid { chain: vec!["grant-root-files".to_string()] });
    resolver.expire("grant-root-files", "2026-08-19T00:00:00.000Z");
    resolver.revoke("grant-root-files", LATER);
    let g2 = g.clone();
    let verdict = |at| validate_chain(&g2, &ctx(), at, Some(&resolver), MAX_CHAIN_LINKS);
    assert!(
        matches!(verdict(instants(NOW, "2026-08-18T09:05:00.000Z")), ChainVerdict::Valid { .. }),
        "revocation waits"
    );
    assert_eq!(verdict(instants(LATER, LATER)), invalid(InvalidCode::ParentInactive, "grant-root-files"));
}

#[test]
fn k53_an_ancestor_out_of_purpose_is_inactive() {
    let mut root = root_files();
    root.constraints.purposes = Some(vec!["other".to_string()]);
    let mut g = agent_read(&root);
    g.constraints.purposes = Some(vec![PURPOSE.to_string()]);
    assert_eq!(check(&g, vec![root]), invalid(InvalidCode::ParentInactive, "grant-root-files"));
}

#[test]
fn k54_issuer_must_be_the_parent_subject_and_namespaces_must_agree() {
    let root = root_files();
    let mut g = agent_read(&root);
    g.issuer = Address::human("user-bob");
    assert_eq!(check(&g, vec![root.clone()]), invalid(InvalidCode::IssuerNotParentSubject, "grant-root-files"));
    // A parent in another world (resolved under the child's namespace key by a sloppy store).
    struct Sloppy(Grant);
    impl sharedos_authz::ports::DelegationResolver for Sloppy {
        fn resolve(&self, _: &str, _: &str) -> Result<Option<Grant>, sharedos_authz::ports::StoreError> {
            Ok(Some(self.0.clone()))
        }
    }
    let mut foreign = root.clone();
    foreign.namespace_id = "world-other".to_string();
    foreign.subject = Address::human("user-bob");
    let verdict = validate_chain(&g, &ctx(), now(), Some(&Sloppy(foreign)), MAX_CHAIN_LINKS);
    assert_eq!(
        verdict,
        invalid(InvalidCode::NamespaceMismatch, "grant-root-files"),
        "namespace is checked before issuer"
    );
}

#[test]
fn k55_a_child_wider_than_its_parent_is_capability_widened() {
    let root = root_files();
    let overbroad = child(
        "grant-overbroad",
        &root,
        vec![files(&["Workspace"], &["read", "create", "replace", "append", "delete"])],
    );
    assert_eq!(check(&overbroad, vec![root.clone()]), invalid(InvalidCode::CapabilityWidened, "grant-root-files"));
    let r = req("files", &["Workspace", "policy.md"], "replace");
    let (d, _) = with_resolver(InMemoryResolver::new([root.clone()])).decide(&authority(vec![overbroad]), invoke(&r));
    assert_eq!(d.reason_code, ReasonCode::DelegationChainInvalid);
    assert_eq!(d.metadata.unwrap()["delegation"], json!({"code": "capability_widened", "grantId": "grant-root-files"}));
    // A child capability pieced together from two parent capabilities is still widened.
    let split = common::root(
        "grant-root-split",
        vec![files(&["Workspace"], &["read"]), files(&["Workspace", "scratch"], &["replace"])],
    );
    let pieced = child("grant-pieced", &split, vec![files(&["Workspace"], &["read", "replace"])]);
    assert_eq!(check(&pieced, vec![split]), invalid(InvalidCode::CapabilityWidened, "grant-root-split"));
    let mut other_owner = agent_read(&root);
    other_owner.capabilities[0].resource.owner = Some(Address::human("user-bob"));
    assert_eq!(check(&other_owner, vec![root]), invalid(InvalidCode::CapabilityWidened, "grant-root-files"));
}

#[test]
fn k56_a_child_may_not_widen_window_or_purposes() {
    let mut root = root_files();
    root.constraints.expires_at = Some("2026-08-19T00:00:00.000Z".to_string());
    root.constraints.not_before = Some(ISSUED.to_string());
    let base = agent_read(&root);
    assert!(matches!(check(&base, vec![root.clone()]), ChainVerdict::Valid { .. }));
    let edits: [fn(&mut Grant); 6] = [
        |g| g.constraints.expires_at = None,
        |g| g.constraints.expires_at = Some("2026-08-20T00:00:00.000Z".to_string()),
        |g| g.constraints.not_before = Some("2026-08-18T07:00:00.000Z".to_string()),
        |g| g.constraints.purposes = None,
        |g| g.constraints.purposes = Some(vec![PURPOSE.to_string(), "extra".to_string()]),
        |g| g.issued_at = "2026-08-18T07:00:00.000Z".to_string(),
    ];
    for edit in edits {
        let mut g = base.clone();
        edit(&mut g);
        assert_eq!(
            check(&g, vec![root.clone()]),
            invalid(InvalidCode::ConstraintsWidened, "grant-root-files"),
            "{:?}",
            g.constraints
        );
    }
    // Omitting notBefore is fine when the child's issuedAt is inside the parent window.
    let mut g = base.clone();
    g.constraints.not_before = None;
    assert!(matches!(check(&g, vec![root]), ChainVerdict::Valid { .. }));
}

#[test]
fn k57_delegation_depth_must_be_granted_and_strictly_decrease() {
    let mut root = root_files();
    let g = agent_read(&root);
    for depth in [None, Some(0)] {
        root.constraints.delegation_depth = depth;
        assert_eq!(check(&g, vec![root.clone()]), invalid(InvalidCode::DelegationNotPermitted, "grant-root-files"));
    }
    root.constraints.delegation_depth = Some(2);
    let mut deep = g.clone();
    deep.constraints.delegation_depth = Some(2);
    assert_eq!(check(&deep, vec![root.clone()]), invalid(InvalidCode::DelegationDepthExceeded, "grant-root-files"));
    deep.constraints.delegation_depth = Some(1);
    assert!(matches!(check(&deep, vec![root]), ChainVerdict::Valid { .. }));
}

#[test]
fn k58_a_bounded_parent_cannot_be_delegated_from() {
    let mut root = root_files();
    root.constraints.max_uses = Some(3);
    assert_eq!(
        check(&agent_read(&root), vec![root.clone()]),
        invalid(InvalidCode::BoundedParentNotDelegable, "grant-root-files")
    );
    let refused = derive_grant(&root, &derive_request(&root));
    assert_eq!(refused, Err(DeriveRefusal::BoundedParentNotDelegable));
}

/// A chain of `links` ancestors above a leaf, each depth one more than its child.
fn chain(links: usize) -> (Grant, Vec<Grant>) {
    let mut ancestors = Vec::new();
    let depth = u64::try_from(links).unwrap();
    let mut top = root("g-0", vec![files(&["Workspace"], &["read"])]);
    top.constraints.delegation_depth = Some(depth + 1);
    ancestors.push(top);
    for i in 1..=links {
        let parent = ancestors.last().unwrap().clone();
        let mut g = child(&format!("g-{i}"), &parent, vec![files(&["Workspace"], &["read"])]);
        g.issuer = parent.subject.clone();
        g.subject = parent.subject.clone();
        g.constraints.delegation_depth = Some(depth + 1 - u64::try_from(i).unwrap());
        ancestors.push(g);
    }
    let leaf = ancestors.pop().unwrap();
    (leaf, ancestors)
}

#[test]
fn k59_chains_longer_than_sixteen_links_are_invalid() {
    let (leaf, ancestors) = chain(16);
    assert!(matches!(check(&leaf, ancestors), ChainVerdict::Valid { chain } if chain.len() == 16));
    let (leaf, ancestors) = chain(17);
    let leaf_id = leaf.id.clone();
    assert_eq!(leaf_id, "g-17");
    assert_eq!(
        check(&leaf, ancestors),
        invalid(InvalidCode::ChainTooLong, "g-1"),
        "too long names the child whose parent would be link 17"
    );
}

#[test]
fn k59_cycles_are_invalid_and_name_the_repeated_grant() {
    let mut a = grant("grant-a", vec![files(&["Workspace"], &["read"])]);
    a.parent_grant_id = Some("grant-b".to_string());
    a.constraints.delegation_depth = Some(5);
    let mut b = a.clone();
    b.id = "grant-b".to_string();
    b.parent_grant_id = Some("grant-a".to_string());
    b.subject = orchestrator();
    b.issuer = mallory();
    b.constraints.delegation_depth = Some(6);
    let mut a_as_parent = a.clone();
    a_as_parent.subject = mallory();
    assert_eq!(check(&a, vec![b, a_as_parent]), invalid(InvalidCode::ChainCycle, "grant-a"));
}

#[test]
fn k60_unverified_outranks_invalid_whatever_the_grant_order() {
    let root = root_files();
    let overbroad = child("grant-overbroad", &root, vec![files(&["Workspace"], &["read", "replace"])]);
    let mut orphan = agent_read(&root);
    orphan.id = "grant-orphan".to_string();
    orphan.parent_grant_id = Some("grant-root-missing".to_string());
    let r = req("files", &["Workspace", "policy.md"], "read");
    for grants in [vec![overbroad.clone(), orphan.clone()], vec![orphan, overbroad]] {
        let (d, _) = with_resolver(InMemoryResolver::new([root.clone()])).decide(&authority(grants), invoke(&r));
        assert_eq!(d.reason_code, ReasonCode::DelegationChainUnverified);
        assert_eq!(d.metadata.unwrap()["delegation"], json!({"code": "parent_not_found", "grantId": "grant-orphan"}));
    }
}

#[test]
fn k60_the_first_of_equally_severe_chain_failures_is_kept() {
    let root = root_files();
    let mut first = child("grant-first", &root, vec![files(&["Workspace"], &["read", "replace"])]);
    first.constraints.delegation_depth = Some(0);
    let mut second = agent_read(&root);
    second.id = "grant-second".to_string();
    second.issuer = Address::human("user-bob");
    second.constraints.purposes = Some(vec![PURPOSE.to_string()]);
    let (d, _) = with_resolver(InMemoryResolver::new([root]))
        .decide(&authority(vec![first, second]), invoke(&read(&["Workspace"])));
    assert_eq!(d.reason_code, ReasonCode::DelegationChainInvalid);
    assert_eq!(d.metadata.unwrap()["delegation"]["code"], "capability_widened");
}

#[test]
fn k62_delegation_is_validated_only_after_a_capability_match() {
    let root = root_files();
    let g = agent_read(&root);
    let resolver = Rc::new(InMemoryResolver::new([root]));
    let authorizer = Authorizer { resolver: Some(resolver.clone()), ..Authorizer::default() };
    let (d, _) = authorizer.decide(&authority(vec![g]), invoke(&req("files", &["Workspace"], "replace")));
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
    assert_eq!(resolver.lookups(), 0);
}

fn derive_request(_parent: &Grant) -> DeriveRequest {
    DeriveRequest {
        id: "grant-derived".to_string(),
        subject: mallory(),
        capabilities: vec![files(&["Workspace", "scratch"], &["read"])],
        constraints: Constraints::default(),
        issued_at: "2026-08-18T08:30:00.000Z".to_string(),
        metadata: None,
    }
}

fn root_with_window() -> Grant {
    let mut r = root_files();
    r.constraints.not_before = Some(ISSUED.to_string());
    r.constraints.expires_at = Some("2026-08-19T00:00:00.000Z".to_string());
    r
}

#[test]
fn k61_derive_grant_inherits_constraints_and_writes_them_onto_the_child() {
    let parent = root_with_window();
    let derived = derive_grant(&parent, &derive_request(&parent)).unwrap();
    assert_eq!(derived.issuer, orchestrator());
    assert_eq!(derived.subject, mallory());
    assert_eq!(derived.namespace_id, NS);
    assert_eq!(derived.parent_grant_id.as_deref(), Some("grant-root-files"));
    assert_eq!(derived.constraints.purposes, parent.constraints.purposes);
    assert_eq!(derived.constraints.not_before, parent.constraints.not_before);
    assert_eq!(derived.constraints.expires_at, parent.constraints.expires_at);
    assert_eq!(derived.constraints.delegation_depth, Some(1), "depth defaults to parent - 1");
    derived.validate().unwrap();
    // And the chain check accepts what derivation produced.
    assert!(matches!(check(&derived, vec![parent]), ChainVerdict::Valid { .. }));
}

#[test]
fn k61_derive_grant_refuses_rather_than_clamps() {
    let parent = root_with_window();
    let base = derive_request(&parent);
    type Edit = fn(&mut DeriveRequest);
    let cases: Vec<(Edit, DeriveRefusal)> = vec![
        (|r| r.capabilities.clear(), DeriveRefusal::EmptyCapabilities),
        (|r| r.id = "grant-root-files".to_string(), DeriveRefusal::IdCollidesWithParent),
        (|r| r.constraints.delegation_depth = Some(2), DeriveRefusal::DepthExhausted),
        (|r| r.capabilities[0].actions.push("replace".to_string()), DeriveRefusal::CapabilityNotWithinParent),
        (|r| r.capabilities[0].resource.path = path(&["Vault"]), DeriveRefusal::CapabilityNotWithinParent),
        (|r| r.capabilities[0].resource.owner = None, DeriveRefusal::CapabilityNotWithinParent),
        (|r| r.capabilities[0].actions = vec!["*".to_string()], DeriveRefusal::CapabilityNotWithinParent),
        (|r| r.constraints.purposes = Some(vec!["other".to_string()]), DeriveRefusal::PurposeNotWithinParent),
        (
            |r| r.constraints.expires_at = Some("2026-08-20T00:00:00.000Z".to_string()),
            DeriveRefusal::WindowNotWithinParent,
        ),
        (
            |r| r.constraints.not_before = Some("2026-08-18T07:00:00.000Z".to_string()),
            DeriveRefusal::WindowNotWithinParent,
        ),
        (|r| r.constraints.expires_at = Some("tomorrow".to_string()), DeriveRefusal::WindowNotWithinParent),
        (|r| r.issued_at = "2026-08-18T07:00:00.000Z".to_string(), DeriveRefusal::IssuedBeforeParent),
        (|r| r.issued_at = "now".to_string(), DeriveRefusal::IssuedBeforeParent),
    ];
    for (edit, expected) in cases {
        let mut r = base.clone();
        edit(&mut r);
        assert_eq!(derive_grant(&parent, &r), Err(expected), "{r:?}");
    }
    // A start after the end leaves an empty window: refused, not clamped.
    let mut empty = base.clone();
    empty.constraints.not_before = Some("2026-08-18T23:30:00.000Z".to_string());
    empty.constraints.expires_at = Some("2026-08-18T23:00:00.000Z".to_string());
    assert_eq!(derive_grant(&parent, &empty), Err(DeriveRefusal::MalformedChild));
    let mut undelegable = parent.clone();
    for depth in [None, Some(0)] {
        undelegable.constraints.delegation_depth = depth;
        assert_eq!(derive_grant(&undelegable, &base), Err(DeriveRefusal::ParentNotDelegable));
    }
}

/// The whole depth a parent leaves may be asked for: one less than its
/// own, not fewer.
#[test]
fn k61_derive_grant_gives_a_child_exactly_the_depth_its_parent_leaves() {
    let parent = root_with_window();
    let remaining = parent.constraints.delegation_depth.unwrap() - 1;
    let mut r = derive_request(&parent);
    r.constraints.delegation_depth = Some(remaining);
    let derived = derive_grant(&parent, &r).unwrap();
    assert_eq!(derived.constraints.delegation_depth, Some(remaining));
    r.constraints.delegation_depth = Some(remaining + 1);
    assert_eq!(derive_grant(&parent, &r), Err(DeriveRefusal::DepthExhausted));
}

#[test]
fn k61_derive_grant_keeps_explicit_narrower_constraints() {
    let parent = root_with_window();
    let mut r = derive_request(&parent);
    r.constraints.expires_at = Some("2026-08-18T12:00:00.000Z".to_string());
    r.constraints.delegation_depth = Some(0);
    r.constraints.max_uses = Some(2);
    let derived = derive_grant(&parent, &r).unwrap();
    assert_eq!(derived.constraints.expires_at.as_deref(), Some("2026-08-18T12:00:00.000Z"));
    assert_eq!(derived.constraints.delegation_depth, Some(0));
    assert_eq!(derived.constraints.max_uses, Some(2));
    let star_parent = root("grant-root-star", vec![files(&["Workspace"], &["*"])]);
    let mut star = derive_request(&star_parent);
    star.capabilities =
        vec![files(&["Workspace", "scratch"], &["*"]), cap("files", &["Workspace", "a"], &["x"], Scope::Exact)];
    assert!(derive_grant(&star_parent, &star).is_ok());
}
