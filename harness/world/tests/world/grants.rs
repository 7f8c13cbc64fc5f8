//! The grant set of a conformance world as a function of the options.

use sharedos_model::capability::Scope;
use sharedos_model::validate::Validate;
use sharedos_world::constants::{agent, orchestrator, owner, ISSUED_AT, NAMESPACE_ID, PURPOSE};
use sharedos_world::grants::{grant_set, GrantOptions, GRANT_LEDGER, GRANT_OVERBROAD, ROOT_FILES};

fn ids(grants: &[std::rc::Rc<sharedos_model::capability::Grant>]) -> Vec<&str> {
    grants.iter().map(|g| g.id.as_str()).collect()
}

#[test]
fn the_baseline_holds_eight_roots_and_seven_working_grants_in_store_order() {
    let set = grant_set(&GrantOptions::default());
    assert_eq!(
        ids(&set.roots),
        [
            "grant-root-execution",
            "grant-root-files",
            "grant-root-scratch",
            "grant-root-ledger",
            "grant-root-messaging",
            "grant-root-escalation",
            "grant-root-snapshot",
            "grant-root-sealed"
        ]
    );
    assert_eq!(
        ids(&set.agent),
        [
            "grant-turn",
            "grant-read",
            "grant-scratch",
            "grant-message",
            "grant-escalation",
            "grant-snapshot",
            "grant-sealed"
        ]
    );
}

#[test]
fn every_grant_is_valid_owned_by_alice_with_descendants_and_the_conformance_purpose() {
    let all = GrantOptions {
        bounded: true,
        over_broad_delegation: true,
        restorable: true,
        broker_granted: true,
        ledger_accounts: true,
        ..GrantOptions::default()
    };
    let set = grant_set(&all);
    for grant in set.all() {
        grant.validate().unwrap();
        assert_eq!(grant.namespace_id, NAMESPACE_ID);
        assert_eq!(grant.issued_at, ISSUED_AT);
        assert_eq!(grant.constraints.purposes, Some(vec![PURPOSE.to_string()]));
        for capability in &grant.capabilities {
            assert_eq!(capability.resource.owner, Some(owner()));
            assert_eq!(capability.scope, Scope::Descendants);
        }
    }
    for root in &set.roots {
        assert_eq!((&root.issuer, &root.subject), (&owner(), &orchestrator()));
        assert_eq!(root.constraints.delegation_depth, Some(2));
        assert_eq!(root.parent_grant_id, None);
    }
    for working in &set.agent {
        assert_eq!((&working.issuer, &working.subject), (&orchestrator(), &agent()));
        assert_eq!(working.constraints.delegation_depth, Some(1));
        let parent = working.parent_grant_id.as_deref().unwrap();
        assert!(set.roots.iter().any(|r| r.id == parent), "{} has a root parent", working.id);
    }
}

#[test]
fn working_grants_carry_exactly_their_roots_capability() {
    let set =
        grant_set(&GrantOptions { restorable: true, broker_granted: true, bounded: true, ..GrantOptions::default() });
    for working in &set.agent {
        let parent = set.find(working.parent_grant_id.as_deref().unwrap()).unwrap();
        assert_eq!(working.capabilities, parent.capabilities, "{}", working.id);
    }
}

#[test]
fn bounded_and_usage_outage_issue_the_single_use_ledger_grant() {
    for options in [
        GrantOptions { bounded: true, ..GrantOptions::default() },
        GrantOptions { usage_store_unavailable: true, ..GrantOptions::default() },
    ] {
        let set = grant_set(&options);
        let ledger = set.find(GRANT_LEDGER).unwrap();
        assert_eq!(ledger.constraints.max_uses, Some(1));
        assert_eq!(ledger.parent_grant_id.as_deref(), Some("grant-root-ledger"));
    }
    assert!(grant_set(&GrantOptions::default()).find(GRANT_LEDGER).is_none());
}

#[test]
fn the_over_broad_grant_claims_mutations_under_the_read_only_root() {
    let set = grant_set(&GrantOptions { over_broad_delegation: true, ..GrantOptions::default() });
    let widened = set.find(GRANT_OVERBROAD).unwrap();
    assert_eq!(widened.parent_grant_id.as_deref(), Some(ROOT_FILES));
    let parent = set.find(ROOT_FILES).unwrap();
    assert_eq!(parent.capabilities[0].actions, ["list", "stat", "read", "search", "grep"]);
    assert_eq!(
        widened.capabilities[0].actions,
        ["list", "stat", "read", "search", "grep", "create", "replace", "append", "delete"]
    );
    assert_eq!(widened.capabilities[0].resource.path, ["Workspace"]);
}

#[test]
fn restorable_and_broker_granted_add_a_root_and_a_working_grant_each() {
    let set = grant_set(&GrantOptions { restorable: true, broker_granted: true, ..GrantOptions::default() });
    assert!(set.find("grant-root-restore").is_some() && set.find("grant-restore").is_some());
    assert!(set.find("grant-root-broker-search").is_some() && set.find("grant-broker-search").is_some());
    let search = set.find("grant-broker-search").unwrap();
    assert_eq!(search.capabilities[0].resource.namespace, "notion");
    assert_eq!(search.capabilities[0].resource.path, ["Handbook"]);
    assert_eq!(search.capabilities[0].actions, ["search"]);
    let restore = set.find("grant-restore").unwrap();
    assert_eq!(restore.capabilities[0].resource.path, ["Workspace", "scratch"]);
    assert_eq!(restore.capabilities[0].actions, ["snapshot:restore"]);
}

#[test]
fn a_withheld_escalation_drops_only_the_working_grant() {
    let set = grant_set(&GrantOptions { escalation_withheld: true, ..GrantOptions::default() });
    assert!(set.find("grant-escalation").is_none());
    assert!(set.find("grant-root-escalation").is_some());
    let root = set.find("grant-root-escalation").unwrap();
    assert_eq!(root.capabilities[0].resource.namespace, "sharedos");
    assert_eq!(root.capabilities[0].resource.path, ["escalation"]);
    assert_eq!(root.capabilities[0].actions, ["request"]);
}

#[test]
fn execution_and_messaging_roots_name_the_agent_and_the_owner() {
    let set = grant_set(&GrantOptions::default());
    let execution = &set.find("grant-root-execution").unwrap().capabilities[0];
    assert_eq!(
        (execution.resource.namespace.as_str(), execution.resource.path.clone()),
        ("sharedos.execution", agent().path())
    );
    assert_eq!(execution.actions, ["invoke"]);
    let messaging = &set.find("grant-root-messaging").unwrap().capabilities[0];
    assert_eq!(
        (messaging.resource.namespace.as_str(), messaging.resource.path.clone()),
        ("sharedos.messaging", owner().path())
    );
    assert_eq!(messaging.actions, ["send"]);
}
