//! Matching rules (K19–K24): invocation, discovery, containment.

use crate::common;

use common::*;
use proptest::prelude::*;
use sharedos_authz::authorizer::{Authorizer, Matcher};
use sharedos_authz::matching::{
    action_covered, capability_intersects_ceiling, capability_matches, capability_within,
    capability_within_in_any_context, requirement_within_ceiling, resolved_owner, segment_prefix,
};
use sharedos_model::address::Address;
use sharedos_model::capability::{Requirement, ResourceRef, Scope};
use sharedos_model::codes::ReasonCode;

fn owned_req(ns: &str, p: &[&str], action: &str, owner: Address) -> Requirement {
    Requirement {
        resource: ResourceRef { owner: Some(owner), ..req(ns, p, action).resource },
        action: action.to_string(),
    }
}

#[test]
fn k19_resource_namespaces_must_be_equal() {
    let c = ctx();
    let grant_files = cap("files", &["Workspace"], &["read"], Scope::Descendants);
    assert!(capability_matches(&grant_files, &req("files", &["Workspace"], "read"), &c));
    assert!(!capability_matches(&grant_files, &req("repo", &["Workspace"], "read"), &c));
    assert!(!capability_matches(&grant_files, &req("files.git", &["Workspace"], "read"), &c));
    let grant_git = cap("files.git", &["Workspace"], &["read"], Scope::Descendants);
    assert!(!capability_matches(&grant_git, &req("files", &["Workspace"], "read"), &c));
    assert!(!capability_intersects_ceiling(&grant_files, &req("repo", &[], "read"), &c));
}

#[test]
fn k20_actions_match_literally_and_only_a_granted_star_widens() {
    let c = ctx();
    let star = files(&["Workspace"], &["*"]);
    assert!(capability_matches(&star, &read(&["Workspace", "a"]), &c));
    assert!(capability_matches(&star, &req("files", &["Workspace"], "snapshot:restore"), &c));
    let reads = files(&["Workspace"], &["read", "snapshot:*"]);
    assert!(!capability_matches(&reads, &req("files", &["Workspace"], "*"), &c), "a requested * is literal");
    assert!(!capability_matches(&reads, &req("files", &["Workspace"], "snapshot:create"), &c), "snapshot:* is literal");
    assert!(capability_matches(&reads, &req("files", &["Workspace"], "snapshot:*"), &c));
    assert!(action_covered(&["*".to_string()], "*"));
    assert!(!action_covered(&["read".to_string()], "READ"));
}

#[test]
fn k21_owners_compare_after_defaulting_to_the_context_owner() {
    let c = ctx();
    let owned = files(&["Workspace"], &["read"]);
    let bare = unowned("files", &["Workspace"], &["read"], Scope::Descendants);
    // Omitted on either side means alice, the context owner.
    assert!(capability_matches(&owned, &read(&["Workspace"]), &c));
    assert!(capability_matches(&bare, &owned_req("files", &["Workspace"], "read", alice()), &c));
    assert!(!capability_matches(&bare, &owned_req("files", &["Workspace"], "read", Address::human("user-bob")), &c));
    let bobs = cap("files", &["Workspace"], &["read"], Scope::Descendants);
    let mut bobs = bobs;
    bobs.resource.owner = Some(Address::human("user-bob"));
    assert!(!capability_matches(&bobs, &read(&["Workspace"]), &c));
    assert_eq!(resolved_owner(&read(&["x"]).resource, &c), &alice());
}

#[test]
fn k22_exact_scope_matches_only_the_identical_path() {
    let c = ctx();
    let exact = cap("files", &["Workspace", "policy.md"], &["read"], Scope::Exact);
    assert!(capability_matches(&exact, &read(&["Workspace", "policy.md"]), &c));
    assert!(!capability_matches(&exact, &read(&["Workspace", "policy.md", "x"]), &c));
    assert!(!capability_matches(&exact, &read(&["Workspace"]), &c));
}

#[test]
fn k22_descendants_are_segment_wise_never_string_prefixes() {
    let c = ctx();
    let cell = files(&["cell-3"], &["read"]);
    assert!(capability_matches(&cell, &read(&["cell-3"]), &c));
    assert!(capability_matches(&cell, &read(&["cell-3", "notes.md"]), &c));
    assert!(!capability_matches(&cell, &read(&["cell-30"]), &c));
    assert!(!capability_matches(&cell, &read(&["cell-30", "notes.md"]), &c));
    assert!(!capability_matches(&cell, &read(&[]), &c), "a child grant never covers its parent");
    assert!(!segment_prefix(&path(&["a", "b"]), &path(&["a"])));
    assert!(segment_prefix(&path(&[]), &path(&["a"])));
}

#[test]
fn k23_one_capability_must_satisfy_the_whole_requirement() {
    // Read on policy.md and write on scratch: no capability grants write on policy.md.
    let g = grant(
        "grant-mixed",
        vec![files(&["Workspace", "policy.md"], &["read"]), files(&["Workspace", "scratch"], &["replace"])],
    );
    let other = grant("grant-other", vec![files(&["Workspace", "scratch"], &["replace"])]);
    let a = authority(vec![g, other]);
    let replace_policy = req("files", &["Workspace", "policy.md"], "replace");
    let (d, _) = Authorizer::default().decide(&a, invoke(&replace_policy));
    assert_eq!(d.reason_code, ReasonCode::NoMatchingGrant);
    let replace_scratch = req("files", &["Workspace", "scratch", "draft.md"], "replace");
    assert!(Authorizer::default().decide(&a, invoke(&replace_scratch)).0.allowed);
}

#[test]
fn k24_read_never_authorizes_mutation_and_search_never_implies_list() {
    let c = ctx();
    let reader = files(&["Workspace"], &["read", "search"]);
    for action in ["replace", "append", "create", "delete", "list", "grep", "stat"] {
        assert!(!capability_matches(&reader, &req("files", &["Workspace", "policy.md"], action), &c), "{action}");
    }
    let lister = files(&["Workspace"], &["list"]);
    assert!(!capability_matches(&lister, &req("files", &["Workspace"], "search"), &c));
}

#[test]
fn k25_discovery_intersects_a_broad_ceiling_with_a_narrow_grant() {
    let c = ctx();
    let scratch = files(&["Workspace", "scratch"], &["read"]);
    assert!(capability_intersects_ceiling(&scratch, &req("files", &[], "read"), &c));
    assert!(capability_intersects_ceiling(&scratch, &read(&["Workspace"]), &c));
    // A descendants grant above the ceiling also intersects.
    assert!(capability_intersects_ceiling(&files(&[], &["read"]), &read(&["Workspace", "scratch"]), &c));
    // Disjoint branches and string prefixes never intersect.
    assert!(!capability_intersects_ceiling(&scratch, &read(&["Workspace", "ledger"]), &c));
    assert!(!capability_intersects_ceiling(&files(&["cell-3"], &["read"]), &read(&["cell-30"]), &c));
    // An exact grant intersects only a ceiling at or above its path.
    let exact = cap("files", &["Workspace", "policy.md"], &["read"], Scope::Exact);
    assert!(capability_intersects_ceiling(&exact, &read(&["Workspace"]), &c));
    assert!(!capability_intersects_ceiling(&exact, &read(&["Workspace", "policy.md", "deeper"]), &c));
    // Action and owner still have to agree.
    assert!(!capability_intersects_ceiling(&scratch, &req("files", &[], "replace"), &c));
    assert!(!capability_intersects_ceiling(&scratch, &owned_req("files", &[], "read", Address::human("user-bob")), &c));
}

#[test]
fn k25_discovery_and_invocation_matchers_differ_only_in_paths() {
    let c = ctx();
    let scratch = files(&["Workspace", "scratch"], &["read"]);
    let ceiling = read(&["Workspace"]);
    assert!(Matcher::Discovery.accepts(&scratch, &ceiling, &c));
    assert!(!Matcher::Invocation.accepts(&scratch, &ceiling, &c));
}

#[test]
fn k41_resolved_requirement_must_stay_under_the_declared_ceiling() {
    let c = ctx();
    let declared = read(&["Workspace"]);
    assert!(requirement_within_ceiling(&read(&["Workspace", "policy.md"]), &declared, &c));
    assert!(requirement_within_ceiling(&owned_req("files", &["Workspace"], "read", alice()), &declared, &c));
    assert!(!requirement_within_ceiling(&read(&["Vault", "secrets.md"]), &declared, &c));
    assert!(!requirement_within_ceiling(&req("files", &["Workspace"], "replace"), &declared, &c));
    assert!(!requirement_within_ceiling(&req("repo", &["Workspace"], "read"), &declared, &c));
    assert!(!requirement_within_ceiling(&read(&["Workspace-2"]), &declared, &c));
}

#[test]
fn k55_containment_checks_namespace_owner_actions_and_scope() {
    let c = ctx();
    let parent = files(&["Workspace"], &["read", "list"]);
    assert!(capability_within(&files(&["Workspace", "scratch"], &["read"]), &parent, &c));
    assert!(!capability_within(&files(&["Workspace"], &["read", "replace"]), &parent, &c));
    assert!(!capability_within(&files(&["Other"], &["read"]), &parent, &c));
    assert!(!capability_within(&cap("repo", &["Workspace"], &["read"], Scope::Descendants), &parent, &c));
    let exact_parent = cap("files", &["Workspace"], &["read"], Scope::Exact);
    assert!(capability_within(&cap("files", &["Workspace"], &["read"], Scope::Exact), &exact_parent, &c));
    assert!(
        !capability_within(&files(&["Workspace"], &["read"]), &exact_parent, &c),
        "descendants child under exact parent"
    );
    assert!(!capability_within(&cap("files", &["Workspace", "a"], &["read"], Scope::Exact), &exact_parent, &c));
    // In a context, an unowned parent resolves to the context owner.
    let bare = unowned("files", &["Workspace"], &["read"], Scope::Descendants);
    assert!(capability_within(&files(&["Workspace"], &["read"]), &bare, &c));
    assert!(capability_within(&files(&["Workspace"], &["*"]), &files(&["Workspace"], &["*"]), &c));
    assert!(capability_within(&files(&["Workspace"], &["anything"]), &files(&[], &["*"]), &c));
}

#[test]
fn k61_in_any_context_containment_refuses_owner_pinning_and_new_wildcards() {
    let bare = unowned("files", &["Workspace"], &["read"], Scope::Descendants);
    assert!(
        !capability_within_in_any_context(&files(&["Workspace"], &["read"]), &bare),
        "owner pinned under unowned parent"
    );
    assert!(
        !capability_within_in_any_context(&bare, &files(&["Workspace"], &["read"])),
        "owner dropped under owned parent"
    );
    assert!(capability_within_in_any_context(&unowned("files", &["Workspace", "a"], &["read"], Scope::Exact), &bare));
    assert!(!capability_within_in_any_context(&files(&["Workspace"], &["*"]), &files(&["Workspace"], &["read"])));
    assert!(capability_within_in_any_context(&files(&["Workspace"], &["*"]), &files(&["Workspace"], &["*"])));
    assert!(capability_within_in_any_context(&files(&["Workspace", "x"], &["read"]), &files(&["Workspace"], &["*"])));
}

fn segment() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,6}"
}

proptest! {
    #[test]
    fn k22_a_segment_never_covers_a_longer_segment_sharing_its_text(base in segment(), tail in "[a-z0-9]{1,4}", rest in proptest::collection::vec(segment(), 0..3)) {
        let c = ctx();
        let grant_cap = files(&[base.as_str()], &["read"]);
        let mut wanted = vec![format!("{base}{tail}")];
        wanted.extend(rest);
        let wanted_refs: Vec<&str> = wanted.iter().map(String::as_str).collect();
        prop_assert!(!capability_matches(&grant_cap, &read(&wanted_refs), &c));
        prop_assert!(!capability_intersects_ceiling(&grant_cap, &read(&wanted_refs), &c));
    }

    #[test]
    fn k22_descendants_cover_every_extension_of_their_path(prefix in proptest::collection::vec(segment(), 0..4), rest in proptest::collection::vec(segment(), 0..4)) {
        let c = ctx();
        let prefix_refs: Vec<&str> = prefix.iter().map(String::as_str).collect();
        let mut full = prefix.clone();
        full.extend(rest.clone());
        let full_refs: Vec<&str> = full.iter().map(String::as_str).collect();
        prop_assert!(capability_matches(&files(&prefix_refs, &["read"]), &read(&full_refs), &c));
        let exact = cap("files", &prefix_refs, &["read"], Scope::Exact);
        prop_assert_eq!(capability_matches(&exact, &read(&full_refs), &c), rest.is_empty());
    }
}
