//! Attack scripts: what a scripted runtime attempts during a row, and what
//! SharedOS must answer to each attempt (a SharedOS "move").
//!
//! Besides SharedOS's attempts, a script can say
//! *when* (a step waits for a virtual instant; a call runs alongside the
//! next steps), state facts for the record (`annotate`), emit runtime
//! events, read `draining`, act after the turn closed, and end with any
//! outcome a runtime can give ([`terminal`]).

pub mod expect;
pub mod step;
pub mod terminal;

pub use expect::{Expectation, Rejection};
pub use step::{Annotation, Attempt, Emission, Forge, Inspection, ReadTarget, StepKind};
pub use terminal::{StallUntil, Terminal, TerminalError, TerminalKind};

use crate::input::error::{LoadError, Site};
use serde::{Deserialize, Serialize};

/// Most attempts one script declares.
pub const MAX_ATTEMPTS: usize = 32;
/// Highest turn an attempt may belong to.
pub const MAX_TURN: u32 = 8;
/// Longest prose or reason text.
pub const MAX_TEXT: usize = 512;

macro_rules! move_kinds {
    ($($(#[doc = $doc:literal])* $variant:ident => $text:literal,)*) => {
        /// What a row is about; one per canonical script.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum MoveKind {
            $($(#[doc = $doc])* #[serde(rename = $text)] $variant,)*
        }

        impl MoveKind {
            /// Every kind, in the matrix's row order.
            pub const ALL: &'static [MoveKind] = &[$(MoveKind::$variant,)*];

            /// The wire spelling.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self { $(MoveKind::$variant => $text,)* }
            }
        }
    };
}

move_kinds! {
    /// A grant-shaped object inside arguments or a message mints nothing.
    ForgedGrant => "forged_grant",
    /// A tool the turn was not offered cannot be found or called.
    HiddenTool => "hidden_tool",
    /// A host ceiling overrides a grant.
    HostPolicyDenied => "host_policy_denied",
    /// Read authority does not cover a mutation.
    ReadToMutation => "read_to_mutation",
    /// An expired grant allows nothing.
    ExpiredGrant => "expired_grant",
    /// A revoked grant, or one under a revoked ancestor, allows nothing.
    ReplayedGrant => "replayed_grant",
    /// A revocation during a turn takes effect on the next turn.
    RevokedMidTurn => "revoked_mid_turn",
    /// Expiry during a turn takes effect on the next call.
    ExpiredMidTurn => "expired_mid_turn",
    /// A call cannot cross a namespace or owner boundary.
    NamespaceCrossing => "namespace_crossing",
    /// A bounded grant stops at its last use.
    BoundedGrantExhausted => "bounded_grant_exhausted",
    /// A failing usage store fails closed.
    UsageStoreUnavailable => "usage_store_unavailable",
    /// A failing authority store fails closed.
    AuthorityUnavailable => "authority_unavailable",
    /// A failing audit sink ends the turn before the next effect.
    AuditUnavailable => "audit_unavailable",
    /// A tool resolving a requirement outside its ceiling is rejected.
    ToolCeilingEscape => "tool_ceiling_escape",
    /// A malformed or mismatched tool result is rejected.
    InvalidToolResult => "invalid_tool_result",
    /// Tool-call and step budgets hold.
    BudgetExceeded => "budget_exceeded",
    /// A draining turn takes no new call.
    TurnDraining => "turn_draining",
    /// No runtime-visible surface carries grant material.
    GrantMaterialUnreachable => "grant_material_unreachable",
    /// A derived grant cannot exceed its parent.
    OverBroadDelegation => "over_broad_delegation",
    /// Rollback without a rollback grant is undiscoverable.
    RollbackUnavailable => "rollback_unavailable",
    /// Rollback is confined to the rollback grant's scope.
    RollbackOutOfScope => "rollback_out_of_scope",
    /// A brokered tool the grant store does not admit is undiscoverable.
    BrokerUngranted => "broker_ungranted",
    /// A brokered tool is confined to its grant's scope.
    BrokerOutOfScope => "broker_out_of_scope",
    /// A turn answers from the catalogue it published.
    CatalogueMovedMidTurn => "catalogue_moved_mid_turn",
    /// An escalation is recorded and audited.
    EscalationRecorded => "escalation_recorded",
    /// An escalation the turn was not granted is refused.
    EscalationRefused => "escalation_refused",
    /// A runtime that throws leaves a failed turn with its record.
    RuntimeCrashed => "runtime_crashed",
    /// A send whose route lease was revoked is not delivered.
    RouteLeaseRevoked => "route_lease_revoked",
    /// Allowed and refused operations leave a complete record.
    RecordCompleteness => "record_completeness",
    /// A typed view narrows disclosure (declared, not implemented).
    TypedGovernedViews => "typed_governed_views",
    /// A replayed call is refused as stale (declared, not implemented).
    ReplayFreshness => "replay_freshness",
    /// What a turn takes, finishes and stops as its deadline nears.
    Drain => "drain",
    /// Whether an ending offers a retry.
    Retryable => "retryable",
    /// What a runtime states for the record.
    Annotate => "annotate",
    /// Messages between principals.
    Messaging => "messaging",
    /// A path the kernel must fail closed on.
    FailClosed => "fail_closed",
    /// A live CLI's own tools are off: asked for one, it has none.
    Containment => "containment",
}

impl MoveKind {
    /// The kinds of SharedOS's own matrix (one canonical script each).
    #[must_use]
    pub fn matrix() -> &'static [MoveKind] {
        let families = [
            MoveKind::Drain,
            MoveKind::Retryable,
            MoveKind::Annotate,
            MoveKind::Messaging,
            MoveKind::FailClosed,
            MoveKind::Containment,
        ];
        let end = MoveKind::ALL.len() - families.len();
        &MoveKind::ALL[..end]
    }
}

impl std::fmt::Display for MoveKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An adversary file: one row's attack script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttackScript {
    /// Editor hint pointing at the JSON Schema; ignored.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Script id; equals the file name without `.json`.
    pub id: String,
    /// What the row is about.
    pub kind: MoveKind,
    /// The property under test, in the matrix's wording.
    pub invariant: String,
    /// What SharedOS must do, in the matrix's wording.
    pub expected_outcome: String,
    /// Prose (not hashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The attempts, in issue order (1..=32).
    pub attempts: Vec<Attempt>,
    /// How the last turn ends besides completing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<Terminal>,
}

impl AttackScript {
    /// How many turns a cell runs: the highest turn any attempt names.
    #[must_use]
    pub fn turn_count(&self) -> u32 {
        self.attempts.iter().map(|a| a.turn).max().unwrap_or(1)
    }

    /// The attempts of one turn, in declared order.
    pub fn attempts_for_turn(&self, turn: u32) -> impl Iterator<Item = &Attempt> {
        self.attempts.iter().filter(move |a| a.turn == turn)
    }

    /// Checks every bound the serde shape cannot express.
    pub(crate) fn check(&self, site: &Site<'_>) -> Result<(), LoadError> {
        site.child("id").id(&self.id)?;
        site.child("invariant").text(&self.invariant, MAX_TEXT)?;
        site.child("expectedOutcome").text(&self.expected_outcome, MAX_TEXT)?;
        if let Some(text) = &self.description {
            site.child("description").text(text, MAX_TEXT)?;
        }
        if let Some(terminal) = &self.terminal {
            terminal.check(&site.child("terminal"))?;
        }
        let attempts = site.child("attempts");
        attempts.length(self.attempts.len(), 1, MAX_ATTEMPTS, "attempts")?;
        for (i, attempt) in self.attempts.iter().enumerate() {
            let at = attempts.index(i);
            attempt.check(&at)?;
            if self.attempts[..i].iter().any(|a| a.id == attempt.id) {
                return Err(at.child("id").duplicate_entry(format!(
                    "an attempt id not used before in this script (`{}` repeats)",
                    attempt.id
                )));
            }
            let earlier_call = self.attempts[..i].iter().any(|a| a.turn == attempt.turn && a.tool.is_some());
            if attempt.step_behind && !earlier_call {
                return Err(at.child("stepBehind").invalid_attempt(
                    "a step behind only on a call after another call of the same turn (the first call is at step 0)",
                ));
            }
        }
        Ok(())
    }
}

/// `site` extended by a relative JSON pointer from the model's validators.
pub(crate) fn at_pointer<'a>(site: &Site<'a>, pointer: &str) -> Site<'a> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .fold(site.clone(), |at, segment| at.child(&segment))
}
