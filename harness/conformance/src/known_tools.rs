//! The closed vocabularies the conformance world answers to: the tool names an
//! attempt may call and the grant ids a world option may arm.
//!
//! A script naming a tool outside this list would only ever be refused
//! `tool_unavailable`, which would look like a passing "hidden tool" row while
//! testing nothing, so the loader refuses it instead. The same goes for a
//! world option revoking a grant the world never issues.

/// Every tool name the conformance world registers, offers in its turn
/// request, or deliberately leaves unregistered, in registration order.
pub const KNOWN_TOOLS: &[&str] = &[
    // The twelve shipped file tools.
    "files.list",
    "files.stat",
    "files.read",
    "files.search",
    "files.grep",
    "files.create",
    "files.replace",
    "files.append",
    "files.delete",
    "files.snapshot.create",
    "files.snapshot.list",
    "files.snapshot.restore",
    // Fixture tools with deliberate misbehaviour.
    "files.open",
    "files.fetch",
    "files.index",
    "files.describe",
    "files.purge",
    // The escalation affordance and the kernel's own request tool.
    "sharedos.escalate",
    "messages.request",
    // The brokered tool, served only through a per-context provider.
    "notion.search",
    // A control-plane name that is listed in the request but never registered.
    "admin.grant.issue",
];

/// Root grants: issued by the owner to the orchestrator, each the minimal
/// ancestor of exactly one working grant.
pub const ROOT_GRANTS: &[&str] = &[
    "grant-root-execution",
    "grant-root-files",
    "grant-root-scratch",
    "grant-root-ledger",
    "grant-root-messaging",
    "grant-root-escalation",
    "grant-root-snapshot",
    "grant-root-sealed",
    "grant-root-restore",
    "grant-root-broker-search",
];

/// Working grants: issued by the orchestrator to the acting agent. Some exist
/// only under a world option (`grant-ledger`, `grant-overbroad`,
/// `grant-restore`, `grant-broker-search`).
pub const WORKING_GRANTS: &[&str] = &[
    "grant-turn",
    "grant-read",
    "grant-scratch",
    "grant-message",
    "grant-escalation",
    "grant-snapshot",
    "grant-sealed",
    "grant-ledger",
    "grant-overbroad",
    "grant-restore",
    "grant-broker-search",
];

/// True when the conformance world knows a tool of this name.
#[must_use]
pub fn is_known_tool(name: &str) -> bool {
    KNOWN_TOOLS.contains(&name)
}

/// True when some world of the suite can issue a grant with this id.
#[must_use]
pub fn is_known_grant(id: &str) -> bool {
    ROOT_GRANTS.contains(&id) || WORKING_GRANTS.contains(&id)
}

/// Every known grant id, roots first.
pub fn known_grants() -> impl Iterator<Item = &'static str> {
    ROOT_GRANTS.iter().chain(WORKING_GRANTS.iter()).copied()
}
