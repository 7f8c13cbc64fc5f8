//! Identities, instants, namespaces, action vocabularies and paths of the
//! conformance world.

use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::instant::Instant;

/// The world (tenant) every grant and context belongs to.
pub const NAMESPACE_ID: &str = "world-conformance";
/// The single purpose every context and grant carries.
pub const PURPOSE: &str = "conformance-probe";
/// The first turn's trace id.
pub const TRACE_ID: &str = "trace-conformance";
/// The frozen world clock.
pub const NOW: &str = "2026-08-18T09:00:00.000Z";
/// When every grant was issued.
pub const ISSUED_AT: &str = "2026-08-18T08:00:00.000Z";
/// How far the moving clock advances per mediated operation.
pub const STEP_MS: i64 = 1000;

/// The owner's user id.
pub const OWNER_ID: &str = "user-alice";
/// The orchestrator's agent id (the authority every working grant is issued by).
pub const ORCHESTRATOR_ID: &str = "agent-orchestrator";
/// The acting agent's id.
pub const AGENT_ID: &str = "agent-mallory";
/// A foreign owner the crossing fixture is asked to reach.
pub const FOREIGN_OWNER_ID: &str = "user-mallory";

/// Resource namespace of the file store.
pub const FILES: &str = "files";
/// Resource namespace of messaging.
pub const MESSAGING: &str = "sharedos.messaging";
/// Resource namespace of turn admission.
pub const EXECUTION: &str = "sharedos.execution";
/// Resource namespace (and tool namespace) of the brokered server.
pub const NOTION: &str = "notion";
/// Resource namespace (and tool namespace) of the escalation affordance.
pub const SHAREDOS: &str = "sharedos";
/// Tool namespace of the sealed tool and the control-plane stub; never enabled.
pub const FILES_ADMIN: &str = "files.admin";
/// Tool namespace of the kernel's request tool.
pub const MESSAGES: &str = "messages";
/// Resource namespace (and tool namespace) of the ledger fixtures.
pub const LEDGER: &str = "ledger";

/// The read action vocabulary.
pub const READ_ACTIONS: [&str; 5] = ["list", "stat", "read", "search", "grep"];
/// The mutation action vocabulary.
pub const MUTATION_ACTIONS: [&str; 4] = ["create", "replace", "append", "delete"];
/// The two harmless snapshot actions.
pub const SNAPSHOT_ACTIONS: [&str; 2] = ["snapshot:create", "snapshot:list"];
/// The rollback action.
pub const RESTORE_ACTION: &str = "snapshot:restore";
/// The sealed action.
pub const PURGE_ACTION: &str = "purge";
/// The broker's action.
pub const SEARCH_ACTION: &str = "search";
/// The action the broker moves its declared capability to; no grant carries it.
pub const MOVED_ACTION: &str = "administer";
/// The turn admission action.
pub const INVOKE_ACTION: &str = "invoke";
/// The messaging action.
pub const SEND_ACTION: &str = "send";
/// The escalation resource path.
pub const ESCALATION_PATH: [&str; 1] = ["escalation"];
/// The escalation action.
pub const ESCALATION_ACTION: &str = "request";

/// `W`: the workspace root.
pub const WORKSPACE: [&str; 1] = ["Workspace"];
/// `P`: the read-only policy file.
pub const POLICY_FILE: [&str; 2] = ["Workspace", "policy.md"];
/// `S`: the writable scratch folder.
pub const SCRATCH: [&str; 2] = ["Workspace", "scratch"];
/// `D`: the writable draft.
pub const DRAFT_FILE: [&str; 3] = ["Workspace", "scratch", "draft.md"];
/// The frozen ledger subtree.
pub const LEDGER_TREE: [&str; 2] = ["Workspace", "ledger"];
/// `L`: the ledger entry.
pub const LEDGER_ENTRY: [&str; 3] = ["Workspace", "ledger", "entry.md"];
/// The out-of-ceiling path the escaping fixture resolves.
pub const VAULT_SECRETS: [&str; 2] = ["Vault", "secrets.md"];
/// The granted broker tree.
pub const HANDBOOK: [&str; 1] = ["Handbook"];
/// A broker page inside the granted tree.
pub const HANDBOOK_ONBOARDING: [&str; 2] = ["Handbook", "onboarding"];
/// A broker page outside the granted tree.
pub const PAYROLL_SALARIES: [&str; 2] = ["Payroll", "salaries"];

/// Seeded content of the policy file.
pub const POLICY_CONTENT: &str = "retention: 90 days";
/// Seeded content of the draft.
pub const DRAFT_CONTENT: &str = "draft";
/// Seeded content of the ledger entry.
pub const LEDGER_ENTRY_CONTENT: &str = "opened";
/// The seeded snapshot of the policy file and the draft.
pub const SEEDED_SNAPSHOT: &str = "snapshot-1";

/// The owner, `human/user-alice`.
#[must_use]
pub fn owner() -> Address {
    Address::human(OWNER_ID)
}

/// The orchestrator, `agent/agent-orchestrator`.
#[must_use]
pub fn orchestrator() -> Address {
    Address::agent(ORCHESTRATOR_ID)
}

/// The acting agent, `agent/agent-mallory`.
#[must_use]
pub fn agent() -> Address {
    Address::agent(AGENT_ID)
}

/// A path constant as owned segments.
#[must_use]
pub fn segments(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| (*s).to_string()).collect()
}

/// The trace id of turn `turn` (1-based): turn 1 keeps the base trace.
#[must_use]
pub fn turn_trace_id(turn: u32) -> String {
    if turn <= 1 {
        TRACE_ID.to_string()
    } else {
        format!("{TRACE_ID}-turn-{turn}")
    }
}

/// The frozen clock as an instant.
#[must_use]
pub fn now_instant() -> Instant {
    Instant::parse(NOW).unwrap_or(Instant(0))
}

/// `NOW + k` seconds: the stamp of the (k+1)-th mediated call under the moving clock.
#[must_use]
pub fn conformance_instant(k: u64) -> String {
    instant_after(NOW, k)
}

/// `base + k` seconds, formatted the way the world's clocks write instants.
#[must_use]
pub fn instant_after(base: &str, k: u64) -> String {
    let start = Instant::parse(base).unwrap_or(Instant(0));
    let step = i64::try_from(k).unwrap_or(i64::MAX).saturating_mul(STEP_MS);
    start.plus_millis(step).to_rfc3339()
}

/// The tool namespaces enabled for every conformance context (never `files.admin`).
#[must_use]
pub fn enabled_tool_namespaces() -> Vec<String> {
    segments(&[FILES, MESSAGES, NOTION, SHAREDOS])
}

/// The world's access context at `now` on `trace_id`: the agent acts under
/// the orchestrator's authority over the owner's resources.
#[must_use]
pub fn context(now: &str, trace_id: &str) -> AccessContext {
    AccessContext {
        namespace_id: NAMESPACE_ID.to_string(),
        actor: agent(),
        authority: orchestrator(),
        owner: owner(),
        purpose: PURPOSE.to_string(),
        trace_id: trace_id.to_string(),
        enabled_tool_namespaces: enabled_tool_namespaces(),
        now: now.to_string(),
        turn_id: None,
    }
}

/// Version of the fixture behaviours (stores, tools, broker, transport); it
/// joins the world hash so a changed fixture is a different world.
pub const FIXTURE_VERSION: &str = "sharedos-conformance/fixtures/v1";
