//! The grant set of a conformance world as a function of the world options:
//! roots (owner → orchestrator) served only by the chain resolver, and
//! working grants (orchestrator → agent) served by the grant source.

use super::constants::{self, EXECUTION, FILES, ISSUED_AT, MESSAGING, NAMESPACE_ID, NOTION, PURPOSE, SHAREDOS};
use sharedos_model::address::Address;
use sharedos_model::capability::{Capability, Constraints, Grant, ResourceRef, Scope};
use std::rc::Rc;

/// Root: turn admission for the agent.
pub const ROOT_EXECUTION: &str = "grant-root-execution";
/// Root: workspace reads.
pub const ROOT_FILES: &str = "grant-root-files";
/// Root: scratch reads and mutations.
pub const ROOT_SCRATCH: &str = "grant-root-scratch";
/// Root: ledger reads and mutations.
pub const ROOT_LEDGER: &str = "grant-root-ledger";
/// Root: send to the owner.
pub const ROOT_MESSAGING: &str = "grant-root-messaging";
/// Root: the escalation affordance.
pub const ROOT_ESCALATION: &str = "grant-root-escalation";
/// Root: workspace snapshot create and list.
pub const ROOT_SNAPSHOT: &str = "grant-root-snapshot";
/// Root: workspace purge.
pub const ROOT_SEALED: &str = "grant-root-sealed";
/// Root: scratch rollback (only when restorable).
pub const ROOT_RESTORE: &str = "grant-root-restore";
/// Root: broker search over the handbook (only when the broker is granted).
pub const ROOT_BROKER_SEARCH: &str = "grant-root-broker-search";

/// Root: the ledger accounts (only when the ledger is attached).
pub const ROOT_LEDGER_ACCOUNTS: &str = "grant-root-ledger-accounts";
/// Working: the ledger accounts (only when the ledger is attached).
pub const GRANT_LEDGER_ACCOUNTS: &str = "grant-ledger-accounts";

/// Working: turn admission.
pub const GRANT_TURN: &str = "grant-turn";
/// Working: workspace reads.
pub const GRANT_READ: &str = "grant-read";
/// Working: scratch reads and mutations.
pub const GRANT_SCRATCH: &str = "grant-scratch";
/// Working: send to the owner.
pub const GRANT_MESSAGE: &str = "grant-message";
/// Working: escalation (dropped when withheld).
pub const GRANT_ESCALATION: &str = "grant-escalation";
/// Working: workspace snapshot create and list.
pub const GRANT_SNAPSHOT: &str = "grant-snapshot";
/// Working: workspace purge (usable only if `files.admin` were enabled).
pub const GRANT_SEALED: &str = "grant-sealed";
/// Working, conditional: single-use ledger reads and mutations.
pub const GRANT_LEDGER: &str = "grant-ledger";
/// Working, conditional: claims workspace mutations under a read-only parent.
pub const GRANT_OVERBROAD: &str = "grant-overbroad";
/// Working, conditional: scratch rollback.
pub const GRANT_RESTORE: &str = "grant-restore";
/// Working, conditional: broker search over the handbook.
pub const GRANT_BROKER_SEARCH: &str = "grant-broker-search";

/// Which conditional grants a world issues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrantOptions {
    /// Issue the single-use ledger grant.
    pub bounded: bool,
    /// The counter is unreachable; implies `bounded`.
    pub usage_store_unavailable: bool,
    /// Issue the over-broad child grant.
    pub over_broad_delegation: bool,
    /// Issue the rollback grant and its root.
    pub restorable: bool,
    /// Issue the broker search grant and its root.
    pub broker_granted: bool,
    /// Drop the working escalation grant.
    pub escalation_withheld: bool,
    /// Issue transfer, configure and read over every ledger account, and its root.
    pub ledger_accounts: bool,
}

/// The world's grants in store order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantSet {
    /// Owner → orchestrator roots.
    pub roots: Vec<Rc<Grant>>,
    /// Orchestrator → agent working grants.
    pub agent: Vec<Rc<Grant>>,
}

impl GrantSet {
    /// Every grant, roots first: what the chain resolver serves.
    #[must_use]
    pub fn all(&self) -> Vec<Rc<Grant>> {
        self.roots.iter().chain(self.agent.iter()).cloned().collect()
    }

    /// The grant with `id`, root or working.
    #[must_use]
    pub fn find(&self, id: &str) -> Option<&Grant> {
        self.roots.iter().chain(self.agent.iter()).find(|g| g.id == id).map(|g| &**g)
    }
}

/// One capability over the owner's resource, with descendants.
#[must_use]
pub fn owned_capability(namespace: &str, path: &[&str], actions: &[&str]) -> Capability {
    Capability {
        resource: ResourceRef::owned(namespace, path, &constants::owner()),
        actions: actions.iter().map(|a| (*a).to_string()).collect(),
        scope: Scope::Descendants,
    }
}

/// A world grant: conformance namespace, conformance purpose, issued at `ISSUED_AT`.
#[must_use]
pub fn world_grant(
    id: &str,
    issuer: &Address,
    subject: &Address,
    capability: Capability,
    depth: u64,
    parent: Option<&str>,
) -> Grant {
    Grant {
        id: id.to_string(),
        namespace_id: NAMESPACE_ID.to_string(),
        subject: subject.clone(),
        issuer: issuer.clone(),
        capabilities: vec![capability],
        constraints: Constraints {
            purposes: Some(vec![PURPOSE.to_string()]),
            delegation_depth: Some(depth),
            ..Constraints::default()
        },
        issued_at: ISSUED_AT.to_string(),
        revoked_at: None,
        parent_grant_id: parent.map(str::to_string),
        metadata: None,
    }
}

fn actions(groups: &[&[&str]]) -> Vec<&'static str> {
    let all: [&'static str; 9] = ["list", "stat", "read", "search", "grep", "create", "replace", "append", "delete"];
    all.into_iter().filter(|a| groups.iter().any(|g| g.contains(a))).collect()
}

/// `(id, capability)` of every root the options call for, in store order.
fn root_capabilities(options: &GrantOptions) -> Vec<(&'static str, Capability)> {
    let reads: &[&str] = &constants::READ_ACTIONS;
    let read_write = actions(&[reads, &constants::MUTATION_ACTIONS]);
    let agent_path = constants::agent().path();
    let agent_path: Vec<&str> = agent_path.iter().map(String::as_str).collect();
    let owner_path = constants::owner().path();
    let owner_path: Vec<&str> = owner_path.iter().map(String::as_str).collect();
    let mut roots = vec![
        (ROOT_EXECUTION, owned_capability(EXECUTION, &agent_path, &[constants::INVOKE_ACTION])),
        (ROOT_FILES, owned_capability(FILES, &constants::WORKSPACE, reads)),
        (ROOT_SCRATCH, owned_capability(FILES, &constants::SCRATCH, &read_write)),
        (ROOT_LEDGER, owned_capability(FILES, &constants::LEDGER_TREE, &read_write)),
        (ROOT_MESSAGING, owned_capability(MESSAGING, &owner_path, &[constants::SEND_ACTION])),
        (ROOT_ESCALATION, owned_capability(SHAREDOS, &constants::ESCALATION_PATH, &[constants::ESCALATION_ACTION])),
        (ROOT_SNAPSHOT, owned_capability(FILES, &constants::WORKSPACE, &constants::SNAPSHOT_ACTIONS)),
        (ROOT_SEALED, owned_capability(FILES, &constants::WORKSPACE, &[constants::PURGE_ACTION])),
    ];
    if options.restorable {
        roots.push((ROOT_RESTORE, owned_capability(FILES, &constants::SCRATCH, &[constants::RESTORE_ACTION])));
    }
    if options.broker_granted {
        roots.push((ROOT_BROKER_SEARCH, owned_capability(NOTION, &constants::HANDBOOK, &[constants::SEARCH_ACTION])));
    }
    if options.ledger_accounts {
        roots.push((
            ROOT_LEDGER_ACCOUNTS,
            owned_capability(constants::LEDGER, &["accounts"], &["transfer", "configure", "read"]),
        ));
    }
    roots
}

/// `(id, parent, capability, max uses)` of every working grant, in store order.
/// A working grant carries its root's capability, except the over-broad one,
/// which claims workspace mutations under the read-only workspace root.
fn working_grants(
    options: &GrantOptions,
    roots: &[(&'static str, Capability)],
) -> Vec<(&'static str, &'static str, Capability, Option<u64>)> {
    let reads: &[&str] = &constants::READ_ACTIONS;
    let widened = owned_capability(FILES, &constants::WORKSPACE, &actions(&[reads, &constants::MUTATION_ACTIONS]));
    let mut specs: Vec<(&'static str, &'static str, Option<Capability>, Option<u64>)> = vec![
        (GRANT_TURN, ROOT_EXECUTION, None, None),
        (GRANT_READ, ROOT_FILES, None, None),
        (GRANT_SCRATCH, ROOT_SCRATCH, None, None),
        (GRANT_MESSAGE, ROOT_MESSAGING, None, None),
    ];
    if !options.escalation_withheld {
        specs.push((GRANT_ESCALATION, ROOT_ESCALATION, None, None));
    }
    specs.push((GRANT_SNAPSHOT, ROOT_SNAPSHOT, None, None));
    specs.push((GRANT_SEALED, ROOT_SEALED, None, None));
    if options.bounded || options.usage_store_unavailable {
        specs.push((GRANT_LEDGER, ROOT_LEDGER, None, Some(1)));
    }
    if options.over_broad_delegation {
        specs.push((GRANT_OVERBROAD, ROOT_FILES, Some(widened), None));
    }
    if options.restorable {
        specs.push((GRANT_RESTORE, ROOT_RESTORE, None, None));
    }
    if options.broker_granted {
        specs.push((GRANT_BROKER_SEARCH, ROOT_BROKER_SEARCH, None, None));
    }
    if options.ledger_accounts {
        specs.push((GRANT_LEDGER_ACCOUNTS, ROOT_LEDGER_ACCOUNTS, None, None));
    }
    specs
        .into_iter()
        .filter_map(|(id, parent, claimed, max_uses)| {
            let inherited = roots.iter().find(|(r, _)| *r == parent).map(|(_, c)| c.clone());
            claimed.or(inherited).map(|capability| (id, parent, capability, max_uses))
        })
        .collect()
}

/// The grants a world with `options` holds.
#[must_use]
pub fn grant_set(options: &GrantOptions) -> GrantSet {
    let (owner, orchestrator, agent) = (constants::owner(), constants::orchestrator(), constants::agent());
    let root_caps = root_capabilities(options);
    let roots = root_caps
        .iter()
        .map(|(id, capability)| Rc::new(world_grant(id, &owner, &orchestrator, capability.clone(), 2, None)))
        .collect();
    let agent = working_grants(options, &root_caps)
        .into_iter()
        .map(|(id, parent, capability, max_uses)| {
            let mut grant = world_grant(id, &orchestrator, &agent, capability, 1, Some(parent));
            grant.constraints.max_uses = max_uses;
            Rc::new(grant)
        })
        .collect();
    GrantSet { roots, agent }
}
