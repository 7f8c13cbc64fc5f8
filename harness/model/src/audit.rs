//! Audit records: what the kernel writes about every decision and operation.

use crate::address::Address;
use crate::capability::{CapabilityRequest, ResourceRef};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What an audit record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AuditType {
    /// A turn's (or lease-less operation's) authority was loaded.
    #[serde(rename = "authority.resolved")]
    AuthorityResolved,
    /// One authorization decision.
    #[serde(rename = "authorization.checked")]
    AuthorizationChecked,
    /// A turn ended by asking a human.
    #[serde(rename = "escalation.requested")]
    EscalationRequested,
    /// A direct resource operation ended.
    #[serde(rename = "resource.invoked")]
    ResourceInvoked,
    /// A catalogue was listed.
    #[serde(rename = "tool.catalog.listed")]
    ToolCatalogListed,
    /// A tool call ended (kernel or envelope).
    #[serde(rename = "tool.invoked")]
    ToolInvoked,
    /// A message was handed to the transport (or refused).
    #[serde(rename = "message.sent")]
    MessageSent,
    /// A turn ended.
    #[serde(rename = "turn.ended")]
    TurnEnded,
}

impl AuditType {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            AuditType::AuthorityResolved => "authority.resolved",
            AuditType::AuthorizationChecked => "authorization.checked",
            AuditType::EscalationRequested => "escalation.requested",
            AuditType::ResourceInvoked => "resource.invoked",
            AuditType::ToolCatalogListed => "tool.catalog.listed",
            AuditType::ToolInvoked => "tool.invoked",
            AuditType::MessageSent => "message.sent",
            AuditType::TurnEnded => "turn.ended",
        }
    }

    /// True for records written before an effect: a failing write refuses
    /// the operation.
    #[must_use]
    pub fn is_pre_effect(self) -> bool {
        matches!(self, AuditType::AuthorityResolved | AuditType::AuthorizationChecked | AuditType::ToolCatalogListed)
    }
}

/// How the audited thing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditOutcome {
    /// A decision allowed.
    Allowed,
    /// Refused.
    Denied,
    /// Ran and answered.
    Succeeded,
    /// Broke.
    Failed,
    /// Asked a human.
    Escalated,
    /// A port was entered and then aborted.
    Interrupted,
}

/// Which boundary decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The kernel.
    Kernel,
    /// The execution envelope.
    Envelope,
    /// The runtime: `endedBy` of a turn the runtime failed itself, and a
    /// cell's `refusedBy` when a live seat's CLI refused the call itself.
    Runtime,
}

impl Source {
    /// Every boundary, in declaration order (the schemas' order).
    pub const ALL: [Source; 3] = [Source::Kernel, Source::Envelope, Source::Runtime];

    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Kernel => "kernel",
            Source::Envelope => "envelope",
            Source::Runtime => "runtime",
        }
    }
}

/// One audit record. Never holds arguments, results, payloads or error text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditEvent {
    /// Schema version (`"1"`).
    pub version: String,
    /// Minted per record, never content-derived.
    pub id: String,
    /// What it is about.
    #[serde(rename = "type")]
    pub kind: AuditType,
    /// How it ended.
    pub outcome: AuditOutcome,
    /// The operation instant.
    pub at: String,
    /// Trace.
    pub trace_id: String,
    /// World.
    pub namespace_id: String,
    /// Who acted.
    pub actor: Address,
    /// Whose authority.
    pub authority: Address,
    /// Whose resources.
    pub owner: Address,
    /// Purpose.
    pub purpose: String,
    /// The resource decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceRef>,
    /// The action decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Matched or overridden grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// Snapshot hash of the authority decided against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authority_hash: Option<String>,
    /// Call id or execution id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// Tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Message id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Message receiver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<Address>,
    /// The code the caller was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Which boundary decided (operations and listings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// The specific situation behind a shared code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Present only as `true`: an infrastructure refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_closed: Option<bool>,
    /// On decisions: whether a bounded use was spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumed: Option<bool>,
    /// On `turn.ended` of failed turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<Source>,
    /// On escalations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_authority: Option<CapabilityRequest>,
    /// Port-supplied data and per-type details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The audit schema version.
pub const AUDIT_VERSION: &str = "1";

impl AuditEvent {
    /// A record about `context` at its `now`, with every optional field unset.
    #[must_use]
    pub fn about(
        id: String,
        kind: AuditType,
        outcome: AuditOutcome,
        context: &crate::access::AccessContext,
    ) -> AuditEvent {
        AuditEvent {
            version: AUDIT_VERSION.to_string(),
            id,
            kind,
            outcome,
            at: context.now.clone(),
            trace_id: context.trace_id.clone(),
            namespace_id: context.namespace_id.clone(),
            actor: context.actor.clone(),
            authority: context.authority.clone(),
            owner: context.owner.clone(),
            purpose: context.purpose.clone(),
            resource: None,
            action: None,
            grant_id: None,
            authority_hash: None,
            operation_id: None,
            tool: None,
            message_id: None,
            receiver: None,
            reason: None,
            source: None,
            cause: None,
            fail_closed: None,
            consumed: None,
            ended_by: None,
            requested_authority: None,
            metadata: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Source;

    /// A new boundary breaks this match, and `ALL` must then list it: the
    /// published schemas are held to `ALL`.
    #[test]
    fn all_lists_every_source_once_in_order() {
        let position = |source: Source| match source {
            Source::Kernel => 0,
            Source::Envelope => 1,
            Source::Runtime => 2,
        };
        assert_eq!(Source::ALL.map(position), [0, 1, 2]);
    }
}
