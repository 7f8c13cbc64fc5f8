//! The closed vocabulary of reason codes the kernel and envelope produce.
//!
//! Runtimes and transports may state codes of their own (`harness_failed`,
//! `route_lease_revoked`); those travel as plain strings in
//! a protocol error's `code`. Everything SharedOS itself decides is
//! one of these.

use serde::{Deserialize, Serialize};

macro_rules! reason_codes {
    ($($(#[doc = $doc:literal])* $variant:ident => $text:literal,)*) => {
        /// A reason code decided by the kernel or the envelope.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum ReasonCode {
            $($(#[doc = $doc])* #[serde(rename = $text)] $variant,)*
        }

        impl ReasonCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ReasonCode] = &[$(ReasonCode::$variant,)*];

            /// The wire spelling.
            #[must_use]
            pub fn as_str(self) -> &'static str {
                match self { $(ReasonCode::$variant => $text,)* }
            }

            /// Parses the wire spelling.
            #[must_use]
            pub fn parse(text: &str) -> Option<ReasonCode> {
                match text { $($text => Some(ReasonCode::$variant),)* _ => None }
            }
        }
    };
}

reason_codes! {
    /// A grant matched (decisions only).
    Allowed => "allowed",
    /// Admission or operation instant unparsable, or empty purpose/trace.
    InvalidContext => "invalid_context",
    /// Empty action or namespace, or a resource owner other than the context owner.
    InvalidRequest => "invalid_request",
    /// Nothing covers the requirement.
    NoMatchingGrant => "no_matching_grant",
    /// A matching bounded grant has no uses left.
    GrantExhausted => "grant_exhausted",
    /// A delegation chain resolved and broke a rule.
    DelegationChainInvalid => "delegation_chain_invalid",
    /// A delegation chain could not be established (fail-closed).
    DelegationChainUnverified => "delegation_chain_unverified",
    /// The grant source failed (fail-closed).
    AuthorityUnavailable => "authority_unavailable",
    /// A bounded grant met a missing or failing usage store (fail-closed).
    UsageStoreUnavailable => "usage_store_unavailable",
    /// A host ceiling refused a grant that would otherwise allow.
    HostPolicyDenied => "host_policy_denied",
    /// The host policy or ceiling malfunctioned (fail-closed).
    HostPolicyUnavailable => "host_policy_unavailable",
    /// Not registered, namespace off, not discoverable, or not offered.
    ToolUnavailable => "tool_unavailable",
    /// The call's trace differs from the context's.
    TraceMismatch => "trace_mismatch",
    /// The tool's parser refused the arguments.
    InvalidToolArguments => "invalid_tool_arguments",
    /// The tool could not resolve its requirement.
    ToolRequirementResolutionFailed => "tool_requirement_resolution_failed",
    /// The tool resolved a requirement outside its declared ceiling.
    InvalidToolRequirement => "invalid_tool_requirement",
    /// A context tool provider failed.
    ToolCatalogUnavailable => "tool_catalog_unavailable",
    /// The tool handler threw.
    ToolExecutionFailed => "tool_execution_failed",
    /// The handler's result was malformed or named another call.
    InvalidToolResult => "invalid_tool_result",
    /// No provider for a resource namespace.
    ResourceProviderNotFound => "resource_provider_not_found",
    /// A resource provider threw.
    ResourceExecutionFailed => "resource_execution_failed",
    /// A resource provider's result was malformed.
    InvalidResourceResult => "invalid_resource_result",
    /// A message's sender, purpose or trace differs from the context.
    MessageContextMismatch => "message_context_mismatch",
    /// The message capability resolver threw.
    MessageRequirementResolutionFailed => "message_requirement_resolution_failed",
    /// No message transport is configured.
    MessageTransportNotConfigured => "message_transport_not_configured",
    /// The transport threw.
    MessageDeliveryFailed => "message_delivery_failed",
    /// The transport's receipt was malformed or named another message.
    InvalidMessageReceipt => "invalid_message_receipt",
    /// `messages.request` was invoked without a prepared envelope.
    MessageRequestNotPrepared => "message_request_not_prepared",
    /// The request was neither accepted nor delivered.
    MessageRequestNotAccepted => "message_request_not_accepted",
    /// The reply router threw.
    MessageReplyResolutionFailed => "message_reply_resolution_failed",
    /// The reply was malformed or broke the correlation rule.
    InvalidMessageReply => "invalid_message_reply",
    /// A declared step outside the step budget.
    StepLimitExceeded => "step_limit_exceeded",
    /// The tool-call budget is spent.
    ToolCallLimitExceeded => "tool_call_limit_exceeded",
    /// The context's actor is not the executing agent.
    ActorMismatch => "actor_mismatch",
    /// The message's receiver is not the executing agent.
    ReceiverMismatch => "receiver_mismatch",
    /// The turn ended by asking a human.
    EscalationRequested => "escalation_requested",
    /// A call after an MCP-side escalation ask.
    EscalationPending => "escalation_pending",
    /// The escalation tool was actually invoked.
    EscalationNotTerminated => "escalation_not_terminated",
    /// The runtime threw, or a host port threw a non-outage error.
    RuntimeFailed => "runtime_failed",
    /// A driver threw (standard loop).
    DriverFailed => "driver_failed",
    /// The runtime's outcome did not parse.
    InvalidRuntimeOutcome => "invalid_runtime_outcome",
    /// A driver's decision did not parse or stepped backwards.
    InvalidDriverDecision => "invalid_driver_decision",
    /// Deadline, host cancellation or drain.
    TurnCancelled => "turn_cancelled",
    /// A new call within the drain grace.
    TurnDraining => "turn_draining",
    /// A pre-effect audit write failed.
    AuditUnavailable => "audit_unavailable",
    /// A post-effect audit write timed out.
    AuditWriteTimeout => "audit_write_timeout",
    /// A port was entered and then aborted (audit only).
    OperationAborted => "operation_aborted",
}

impl ReasonCode {
    /// Infrastructure denials: SharedOS could not establish a fact, so the
    /// record marks them `failClosed` and denial rates exclude them.
    #[must_use]
    pub fn is_fail_closed(self) -> bool {
        matches!(
            self,
            ReasonCode::AuthorityUnavailable
                | ReasonCode::DelegationChainUnverified
                | ReasonCode::UsageStoreUnavailable
                | ReasonCode::HostPolicyUnavailable
                | ReasonCode::AuditUnavailable
        )
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ReasonCode> for String {
    fn from(code: ReasonCode) -> String {
        code.as_str().to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_spelling() {
        for code in ReasonCode::ALL {
            assert_eq!(ReasonCode::parse(code.as_str()), Some(*code));
            let json = serde_json::to_string(code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }
}
