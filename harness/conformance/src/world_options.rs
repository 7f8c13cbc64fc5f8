//! World options: the fault injection a condition arms before its turn runs.
//!
//! Every option is optional and an unknown option is refused, because a
//! misspelt option would otherwise leave the world at baseline and turn a
//! fault row into a silent control. Flags serialise only when set, so a world
//! that writes `"bounded": false` hashes like one that leaves it out.
//!
//! Besides SharedOS's options (`10-conformance.md` §3.7) a world can set the
//! turn's deadline, cancel it from the host (at an instant, or before it
//! starts), fail one chosen audit write ([`audit`]), attach the ledger
//! ([`ledger`]), and describe tools differently in the request than the
//! kernel defines them ([`classify`]).

pub mod audit;
pub mod classify;
pub mod ledger;

pub use audit::{AuditFailsAt, AuditRecord};
pub use classify::RequestClassification;
pub use ledger::LedgerOption;

use crate::known_tools::is_known_grant;
use crate::loader::{LoadError, Site};
use serde::{Deserialize, Serialize};
use sharedos_model::execution::{MAX_EXECUTION_TIMEOUT_MS, MAX_EXECUTION_TOOL_CALLS, MAX_STEPS};
use sharedos_model::instant::Instant;

/// Most grant ids one option may name.
const MAX_GRANT_IDS: usize = 32;
/// Largest count an outage or lease option may wait for.
const MAX_COUNT: u32 = 1000;
/// Highest turn a multi-turn option may name (matches an attempt's turn bound).
const MAX_TURN: u32 = 8;

/// Whether a brokered tool provider is attached, and with what authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BrokerMode {
    /// The provider is attached but no grant admits its tool.
    Registered,
    /// The provider is attached and a search grant (with its root) is issued.
    Granted,
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

/// The options of one condition's world (`10-conformance.md` §3.7).
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
    /// Overrides the world's start instant (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    /// Recipients, message ports and host-driven messaging operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messaging: Option<crate::messaging::options::MessagingOptions>,
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
        "now",
        "messaging",
    ];

    /// True when nothing is armed: the baseline world.
    #[must_use]
    pub fn is_baseline(&self) -> bool {
        self == &WorldOptions::default()
    }

    /// Checks bounds and that every grant id names a grant the world issues.
    pub(crate) fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        if let Some(ids) = &self.revoked {
            check_grant_ids(ids, &site.child("revoked"))?;
        }
        if let Some(ids) = &self.expired {
            check_grant_ids(ids, &site.child("expired"))?;
        }
        if let Some(option) = &self.revoked_after_turn {
            let at = site.child("revokedAfterTurn");
            check_range(u64::from(option.turn), 1, u64::from(MAX_TURN), &at.child("turn"))?;
            check_grant_ids(&option.grant_ids, &at.child("grantIds"))?;
        }
        if let Some(option) = &self.expires_after_operations {
            let at = site.child("expiresAfterOperations");
            check_range(u64::from(option.operations), 1, u64::from(MAX_COUNT), &at.child("operations"))?;
            check_grant_ids(&option.grant_ids, &at.child("grantIds"))?;
        }
        let counts = [
            ("authorityFailsAfterLoads", self.authority_fails_after_loads),
            ("auditFailsAfterOperations", self.audit_fails_after_operations),
            ("routeRevokedAfterDeliveries", self.route_revoked_after_deliveries),
        ];
        for (key, value) in counts {
            if let Some(n) = value {
                check_range(u64::from(n), 0, u64::from(MAX_COUNT), &site.child(key))?;
            }
        }
        if let Some(n) = self.max_tool_calls {
            check_range(u64::from(n), 1, u64::from(MAX_EXECUTION_TOOL_CALLS), &site.child("maxToolCalls"))?;
        }
        if let Some(n) = self.max_steps {
            check_range(u64::from(n), 1, u64::from(MAX_STEPS), &site.child("maxSteps"))?;
        }
        if let Some(n) = self.drain_grace_ms {
            check_range(n, 0, MAX_EXECUTION_TIMEOUT_MS, &site.child("drainGraceMs"))?;
        }
        self.check_envelope_world(site)?;
        if let Some(messaging) = &self.messaging {
            messaging.check(&site.child("messaging"))?;
        }
        if let Some(now) = &self.now {
            if Instant::parse(now).is_none() {
                return Err(site.child("now").out_of_bounds("an RFC 3339 timestamp with an offset"));
            }
        }
        Ok(())
    }
}

impl WorldOptions {
    /// Checks the deadline, host-signal, audit-write, ledger and request
    /// options, including the pairs that cannot be armed together.
    fn check_envelope_world(&self, site: &Site<'_>) -> Result<(), LoadError> {
        if let Some(n) = self.timeout_ms {
            check_range(n, 1, MAX_EXECUTION_TIMEOUT_MS, &site.child("timeoutMs"))?;
        }
        if let Some(n) = self.host_cancels_at_ms {
            check_range(n, 0, MAX_EXECUTION_TIMEOUT_MS, &site.child("hostCancelsAtMs"))?;
            if self.host_signal_aborted {
                return Err(site
                    .child("hostCancelsAtMs")
                    .out_of_bounds("no cancellation instant when the host signal is already aborted"));
            }
        }
        if let Some(fault) = &self.audit_fails_at {
            fault.check(&site.child("auditFailsAt"))?;
            if self.audit_fails_after_operations.is_some() {
                return Err(site
                    .child("auditFailsAt")
                    .out_of_bounds("one audit fault per world (auditFailsAfterOperations is also set)"));
            }
        }
        if let Some(ledger) = &self.ledger {
            ledger.check(&site.child("ledger"))?;
        }
        if let Some(list) = &self.request_classifies {
            classify::check(list, &site.child("requestClassifies"))?;
        }
        Ok(())
    }
}

fn check_range(value: u64, min: u64, max: u64, site: &Site<'_>) -> Result<(), LoadError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(site.out_of_bounds(format!("an integer from {min} to {max}")))
    }
}

fn check_grant_ids(ids: &[String], site: &Site<'_>) -> Result<(), LoadError> {
    if ids.is_empty() || ids.len() > MAX_GRANT_IDS {
        return Err(site.out_of_bounds(format!("between 1 and {MAX_GRANT_IDS} grant ids")));
    }
    for (i, id) in ids.iter().enumerate() {
        let at = site.index(i);
        if !is_known_grant(id) {
            return Err(at.unknown_grant(id));
        }
        if ids[..i].contains(id) {
            return Err(at.duplicate_entry(format!("a grant id not listed before (`{id}` repeats)")));
        }
    }
    Ok(())
}
