//! World options: the fault injection a condition arms before its turn runs,
//! as a case file states them (the loader deserializes into these types and
//! checks their bounds; the fixtures are armed from them directly).
//!
//! Every option is optional and an unknown option is refused, because a
//! misspelt option would otherwise leave the world at baseline and turn a
//! fault row into a silent control. Flags serialise only when set, so a world
//! that writes `"bounded": false` hashes like one that leaves it out.
//!
//! Besides SharedOS's own options (the store and lease faults of R65–R67,
//! among others) a world can set the turn's deadline, cancel it from the
//! host (at an instant, or before it starts), fail one chosen audit write
//! ([`audit`]), attach the ledger ([`ledger`]), and describe tools
//! differently in the request than the kernel defines them ([`classify`]).

pub mod audit;
pub mod classify;
pub mod handler;
pub mod ledger;
pub mod messaging;

use crate::grants::GrantOptions;
use audit::AuditFailsAt;
use classify::RequestClassification;
use ledger::LedgerOption;
use serde::{Deserialize, Serialize};

/// Whether a brokered tool provider is attached, and with what authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrokerMode {
    /// The provider is attached but no grant admits its tool.
    Registered,
    /// The provider is attached and a search grant (with its root) is issued.
    Granted,
    /// The provider is attached, no grant admits its tool, and every listing
    /// it is asked for fails.
    Failing,
}

/// How the escalation affordance is armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EscalationMode {
    /// The working escalation grant is not issued.
    Withheld,
}

/// Revoke grants right after a given turn loaded its authority.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevokedAfterTurn {
    /// The turn (1-based) whose authority load triggers the revocation.
    pub turn: u32,
    /// The grants to revoke.
    pub grant_ids: Vec<String>,
}

/// Let grants expire after a number of mediated operations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpiresAfterOperations {
    /// Operations answered before the expiry instant is reached.
    pub operations: u32,
    /// The grants whose expiry is set.
    pub grant_ids: Vec<String>,
}

/// The options of one condition's world.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorldOptions {
    /// Grants revoked before the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<Vec<String>>,
    /// Grants whose expiry is set to the world's start instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired: Option<Vec<String>>,
    /// Grants revoked right after a turn's authority load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_after_turn: Option<RevokedAfterTurn>,
    /// Grants that expire after a number of operations (starts the moving clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_after_operations: Option<ExpiresAfterOperations>,
    /// The grant store fails after this many loads (0: at admission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authority_fails_after_loads: Option<u32>,
    /// The audit sink fails once this many tool operations were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_fails_after_operations: Option<u32>,
    /// The route lease closes after this many accepted dispatches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_revoked_after_deliveries: Option<u32>,
    /// Issue the single-use ledger grant.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bounded: bool,
    /// The usage counter is unreachable (implies `bounded`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub usage_store_unavailable: bool,
    /// Install the host ceiling freezing the ledger and every mutation.
    #[serde(default, skip_serializing_if = "is_false")]
    pub host_policy_frozen: bool,
    /// Install that ceiling broken: it malfunctions on the ledger subtree.
    #[serde(default, skip_serializing_if = "is_false")]
    pub host_policy_malfunctions: bool,
    /// The delegation chain resolver fails every lookup.
    #[serde(default, skip_serializing_if = "is_false")]
    pub delegation_resolver_fails: bool,
    /// Issue a child grant that claims more than its parent.
    #[serde(default, skip_serializing_if = "is_false")]
    pub over_broad_delegation: bool,
    /// Issue the rollback grant and its root.
    #[serde(default, skip_serializing_if = "is_false")]
    pub restorable: bool,
    /// Attach the brokered tool provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker: Option<BrokerMode>,
    /// The provider moves its tool's capability after the turn's listing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub broker_moved_after_listing: bool,
    /// Arm the escalation affordance differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationMode>,
    /// The turn request's tool-call budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
    /// The turn request's step budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// The envelope's drain grace in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_grace_ms: Option<u64>,
    /// The turn request's deadline in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The host cancels each turn at this many milliseconds after its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cancels_at_ms: Option<u64>,
    /// The host's signal is already aborted when each turn is executed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub host_signal_aborted: bool,
    /// The audit sink fails one chosen write (and later writes of its type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_fails_at: Option<AuditFailsAt>,
    /// Attach the ledger: accounts, its tools (offered), and a grant over them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger: Option<LedgerOption>,
    /// Tools the turn request describes differently from the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_classifies: Option<Vec<RequestClassification>>,
    /// File tools whose handlers throw when they run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler_throws: Option<Vec<String>>,
    /// Overrides the world's start instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    /// Recipients, message ports and host-driven messaging operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messaging: Option<messaging::MessagingOptions>,
}

// serde's `skip_serializing_if` hands the field by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(flag: &bool) -> bool {
    !*flag
}

impl WorldOptions {
    /// Every option's wire name, in declaration order (the JSON Schema lists
    /// the same set; a test keeps them equal).
    pub const KEYS: &'static [&'static str] = &[
        "revoked",
        "expired",
        "revokedAfterTurn",
        "expiresAfterOperations",
        "authorityFailsAfterLoads",
        "auditFailsAfterOperations",
        "routeRevokedAfterDeliveries",
        "bounded",
        "usageStoreUnavailable",
        "hostPolicyFrozen",
        "hostPolicyMalfunctions",
        "delegationResolverFails",
        "overBroadDelegation",
        "restorable",
        "broker",
        "brokerMovedAfterListing",
        "escalation",
        "maxToolCalls",
        "maxSteps",
        "drainGraceMs",
        "timeoutMs",
        "hostCancelsAtMs",
        "hostSignalAborted",
        "auditFailsAt",
        "ledger",
        "requestClassifies",
        "handlerThrows",
        "now",
        "messaging",
    ];

    /// True when nothing is armed: the baseline world.
    #[must_use]
    pub fn is_baseline(&self) -> bool {
        self == &WorldOptions::default()
    }

    /// Which conditional grants these options have the world issue.
    #[must_use]
    pub fn grant_options(&self) -> GrantOptions {
        GrantOptions {
            bounded: self.bounded,
            usage_store_unavailable: self.usage_store_unavailable,
            over_broad_delegation: self.over_broad_delegation,
            restorable: self.restorable,
            broker_granted: self.broker == Some(BrokerMode::Granted),
            escalation_withheld: self.escalation == Some(EscalationMode::Withheld),
            ledger_accounts: self.ledger.is_some(),
        }
    }
}
