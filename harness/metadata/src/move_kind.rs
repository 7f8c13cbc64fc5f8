//! What a row is about: the kind of its script, one per canonical script of
//! SharedOS's matrix and one per family beyond it.

use serde::{Deserialize, Serialize};

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
