//! Sender-owned sends (`sendMessage`) and the post-authorization delivery
//! routine it shares with `messages.request` (M4–M12).
//!
//! A message carries data and one purpose, never authority: the send
//! requirement is recipient-scoped and consumed once, and delivery is never
//! authorized a second time.

use crate::audit::with_requirement;
use crate::decision::Ask;
use crate::kernel::{Core, Kernel};
use crate::lease_table::check_abort;
use crate::ports::{ProviderError, ProviderErrorOrigin};
use serde::Deserialize;
use serde_json::Value;
use sharedos_authz::authority::AuthorityResolution;
use sharedos_authz::authorizer::Matcher;
use sharedos_model::access::AccessContext;
use sharedos_model::audit::{AuditOutcome, AuditType, Source};
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_model::codes::ReasonCode;
use sharedos_model::message::{MessageDeliveryResult, MessageEnvelope};
use sharedos_model::tool::ProtocolError;
use sharedos_model::validate::{self, Validate};
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;

/// The resource namespace of send capabilities.
pub const MESSAGING_NAMESPACE: &str = "sharedos.messaging";

/// The default send requirement: `sharedos.messaging / [kind,id] / send`,
/// owner the context owner (K76).
#[must_use]
pub fn recipient_requirement(context: &AccessContext, envelope: &MessageEnvelope) -> Requirement {
    Requirement {
        resource: ResourceRef {
            namespace: MESSAGING_NAMESPACE.to_string(),
            path: envelope.receiver.path(),
            owner: Some(context.owner.clone()),
        },
        action: "send".to_string(),
    }
}

/// What the `message.sent` record says besides the receipt.
#[derive(Default)]
pub(crate) struct SendRecord {
    pub(crate) requirement: Option<Requirement>,
    pub(crate) grant_id: Option<String>,
    pub(crate) operation_id: Option<String>,
}

fn refusal(
    envelope: &MessageEnvelope,
    context: &AccessContext,
    code: ReasonCode,
    message: &str,
) -> MessageDeliveryResult {
    let error = ProtocolError::new(code.as_str(), message);
    let message_id = envelope.id.clone();
    let timestamp = context.now.clone();
    if code == ReasonCode::MessageContextMismatch || code.is_fail_closed() || is_authorization_code(code) {
        MessageDeliveryResult::Denied { message_id, timestamp, error, metadata: None }
    } else {
        MessageDeliveryResult::Failed { message_id, timestamp, error, metadata: None }
    }
}

fn is_authorization_code(code: ReasonCode) -> bool {
    matches!(
        code,
        ReasonCode::InvalidContext
            | ReasonCode::InvalidRequest
            | ReasonCode::NoMatchingGrant
            | ReasonCode::GrantExhausted
            | ReasonCode::DelegationChainInvalid
            | ReasonCode::HostPolicyDenied
    )
}

impl Kernel {
    /// Sends a host-authored message (M4–M8).
    ///
    /// # Errors
    /// `InvalidInput` for an envelope that does not parse strictly (no result,
    /// no audit, M4); an abort; a pre-effect audit outage.
    pub async fn send_message(
        &self,
        context: &AccessContext,
        envelope: &Value,
        signal: &AbortSignal,
    ) -> Result<MessageDeliveryResult, KernelError> {
        check_abort(signal)?;
        let envelope = MessageEnvelope::from_value(envelope).map_err(|_| {
            KernelError::InvalidInput("message envelope does not match the SharedOS contract".to_string())
        })?;
        let core = &self.core;
        let mut record = SendRecord::default();
        if envelope.sender != context.actor
            || envelope.purpose != context.purpose
            || envelope.trace_id != context.trace_id
        {
            let result = refusal(
                &envelope,
                context,
                ReasonCode::MessageContextMismatch,
                "the message does not match its context",
            );
            core.record_sent(context, &envelope, &record, &result, None).await;
            return Ok(result);
        }
        let requirement = match core.send_requirement(context, &envelope) {
            Ok(requirement) => requirement,
            Err(detail) => {
                core.report(ProviderError { origin: ProviderErrorOrigin::MessageCapabilityResolver, detail });
                let code = ReasonCode::MessageRequirementResolutionFailed;
                let result = refusal(&envelope, context, code, "the send requirement could not be resolved");
                core.record_sent(context, &envelope, &record, &result, None).await;
                return Ok(result);
            }
        };
        record.requirement = Some(requirement.clone());
        let state = self.turn_state(context, signal).await?;
        let AuthorityResolution::Resolved(authority) = &*state.authority else {
            let result =
                refusal(&envelope, context, ReasonCode::AuthorityUnavailable, "authority could not be established");
            core.record_sent(context, &envelope, &record, &result, None).await;
            return Ok(result);
        };
        let ask =
            Ask { context, requirement: &requirement, matcher: Matcher::Invocation, consume: true, operation_id: None };
        let decision = core.decide_recorded(authority, &ask).await?;
        record.grant_id = decision.matched_grant_id.clone();
        if !decision.allowed {
            let result = refusal(&envelope, context, decision.reason_code, "the message was not authorized");
            core.record_sent(context, &envelope, &record, &result, None).await;
            return Ok(result);
        }
        core.deliver_authorized(context, &envelope, signal, record).await
    }
}

impl Core {
    /// The send requirement of `envelope`, from the installed resolver or the default.
    pub(crate) fn send_requirement(
        &self,
        context: &AccessContext,
        envelope: &MessageEnvelope,
    ) -> Result<Requirement, String> {
        match &self.message_resolver {
            Some(resolver) => resolver.resolve(context, envelope),
            None => Ok(recipient_requirement(context, envelope)),
        }
    }

    /// Delivers a message whose send requirement was already consumed
    /// (M9–M11). Writes exactly one `message.sent` (M12).
    ///
    /// # Errors
    /// Only an abort.
    pub(crate) async fn deliver_authorized(
        &self,
        context: &AccessContext,
        envelope: &MessageEnvelope,
        signal: &AbortSignal,
        record: SendRecord,
    ) -> Result<MessageDeliveryResult, KernelError> {
        let Some(transport) = &self.transport else {
            let result = refusal(
                envelope,
                context,
                ReasonCode::MessageTransportNotConfigured,
                "no message transport is configured",
            );
            self.record_sent(context, envelope, &record, &result, None).await;
            return Ok(result);
        };
        check_abort(signal)?;
        let result = match transport.deliver(context, envelope, signal).await {
            Ok(receipt) => match parse_receipt(&receipt) {
                Some(result) if result.message_id() == envelope.id => result,
                _ => refusal(
                    envelope,
                    context,
                    ReasonCode::InvalidMessageReceipt,
                    "the transport returned a mismatched receipt",
                ),
            },
            Err(detail) => {
                if let Some(reason) = signal.reason() {
                    let aborted = ReasonCode::OperationAborted.as_str();
                    let result = refusal(envelope, context, ReasonCode::MessageDeliveryFailed, "aborted");
                    self.record_sent(context, envelope, &record, &result, Some(aborted)).await;
                    return Err(KernelError::Aborted(reason));
                }
                self.report(ProviderError { origin: ProviderErrorOrigin::MessageTransport, detail });
                refusal(envelope, context, ReasonCode::MessageDeliveryFailed, "the transport failed")
            }
        };
        self.record_sent(context, envelope, &record, &result, None).await;
        Ok(result)
    }

    /// Writes one `message.sent` (post-effect). `interrupted` names the reason
    /// of an abort met inside the transport.
    pub(crate) async fn record_sent(
        &self,
        context: &AccessContext,
        envelope: &MessageEnvelope,
        record: &SendRecord,
        result: &MessageDeliveryResult,
        interrupted: Option<&str>,
    ) {
        let outcome = match (interrupted, result) {
            (Some(_), _) => AuditOutcome::Interrupted,
            (None, MessageDeliveryResult::Accepted { .. } | MessageDeliveryResult::Delivered { .. }) => {
                AuditOutcome::Succeeded
            }
            (None, MessageDeliveryResult::Denied { .. }) => AuditOutcome::Denied,
            (None, MessageDeliveryResult::Failed { .. }) => AuditOutcome::Failed,
        };
        let mut event = self.event(context, AuditType::MessageSent, outcome);
        event.message_id = Some(envelope.id.clone());
        event.receiver = Some(envelope.receiver.clone());
        if let Some(requirement) = &record.requirement {
            with_requirement(&mut event, requirement, context);
        }
        event.grant_id = record.grant_id.clone();
        event.operation_id = record.operation_id.clone();
        event.source = Some(Source::Kernel);
        event.reason = match interrupted {
            Some(reason) => Some(reason.to_string()),
            None => result.error().map(|e| e.code.clone()),
        };
        if result.error().and_then(|e| ReasonCode::parse(&e.code)).is_some_and(ReasonCode::is_fail_closed) {
            event.fail_closed = Some(true);
        }
        self.write_post(&event).await;
    }
}

/// A receipt that parses strictly and keeps its bounds.
fn parse_receipt(receipt: &Value) -> Option<MessageDeliveryResult> {
    let result = MessageDeliveryResult::deserialize(receipt).ok()?;
    let (id, timestamp) = match &result {
        MessageDeliveryResult::Accepted { message_id, timestamp, .. }
        | MessageDeliveryResult::Delivered { message_id, timestamp, .. }
        | MessageDeliveryResult::Denied { message_id, timestamp, .. }
        | MessageDeliveryResult::Failed { message_id, timestamp, .. } => (message_id, timestamp),
    };
    validate::identifier(id, "/messageId").ok()?;
    validate::timestamp(timestamp, "/timestamp").ok()?;
    if let Some(error) = result.error() {
        error.validate().ok()?;
    }
    Some(result)
}
