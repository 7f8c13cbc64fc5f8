//! The kernel-owned `messages.request` tool (M15–M27): the model
//! names a recipient and a payload; everything else in the envelope comes
//! from the trusted context. The generic tool path consumes the recipient's
//! send requirement once; delivery is never re-authorized.

use crate::kernel::Core;
use crate::messaging::{SendRecord, MESSAGING_NAMESPACE};
use crate::ports::{HandlerError, ParsedCall, Prepared, ProviderError, ProviderErrorOrigin, Resolution, ToolHandler};
use futures::future::LocalBoxFuture;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_model::codes::ReasonCode;
use sharedos_model::message::{MessageEnvelope, PROTOCOL_VERSION};
use sharedos_model::tool::{
    ProtocolError, ReadWrite, SharedObject, ToolAnnotations, ToolDefinition, ToolOutcome, ToolResult,
};
use sharedos_model::validate::Validate;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

/// The tool's name.
pub const MESSAGES_REQUEST: &str = "messages.request";

/// The `messages.request` handler.
pub(crate) struct MessageRequestTool {
    core: Rc<Core>,
    definition: Arc<ToolDefinition>,
}

impl MessageRequestTool {
    pub(crate) fn new(core: Rc<Core>) -> MessageRequestTool {
        MessageRequestTool { core, definition: Arc::clone(&DEFINITION) }
    }

    fn build_envelope(&self, context: &AccessContext, call: &ParsedCall) -> Result<MessageEnvelope, String> {
        let recipient: Address = call
            .arguments
            .get("recipient")
            .cloned()
            .and_then(|v| serde_json::from_value(v).ok())
            .ok_or_else(|| "the parsed call has no recipient".to_string())?;
        let envelope = MessageEnvelope {
            version: PROTOCOL_VERSION.to_string(),
            id: (self.core.message_ids)(context, call),
            sender: context.actor.clone(),
            receiver: recipient,
            purpose: context.purpose.clone(),
            payload: call.arguments.get("payload").cloned().unwrap_or(Value::Null),
            trace_id: context.trace_id.clone(),
            created_at: context.now.clone(),
            reply_to: None,
            provenance: None,
        };
        envelope.validate().map_err(|e| e.to_string())?;
        Ok(envelope)
    }

    async fn run(
        &self,
        context: &AccessContext,
        call: &ParsedCall,
        signal: &AbortSignal,
    ) -> Result<ToolResult, HandlerError> {
        let Some(request) = call.prepared.as_ref().and_then(Prepared::get::<MessageEnvelope>) else {
            return Ok(failure(call, context, ReasonCode::MessageRequestNotPrepared, "the request was not prepared"));
        };
        let record = SendRecord { requirement: None, grant_id: None, operation_id: Some(call.id.clone()) };
        let delivery = self.core.deliver_authorized(context, request, signal, record).await.map_err(abort_error)?;
        if !delivery.is_accepted() {
            if let Some(error) = delivery.error() {
                self.core.message_causes.borrow_mut().insert(call.id.clone(), error.code.clone());
            }
            return Ok(failure(call, context, ReasonCode::MessageRequestNotAccepted, "the request was not accepted"));
        }
        if signal.is_aborted() {
            return Err(HandlerError::Aborted);
        }
        let Some(router) = &self.core.router else {
            return Ok(failure(
                call,
                context,
                ReasonCode::MessageReplyResolutionFailed,
                "no reply router is configured",
            ));
        };
        let delivery_value = json!(delivery);
        let reply = router.resolve_reply(context, request, &delivery_value, signal).await;
        if signal.is_aborted() {
            return Err(HandlerError::Aborted);
        }
        let reply = match reply {
            Ok(reply) => reply,
            Err(detail) => {
                self.core.report(ProviderError { origin: ProviderErrorOrigin::MessageRouter, detail });
                return Ok(failure(
                    call,
                    context,
                    ReasonCode::MessageReplyResolutionFailed,
                    "the reply could not be resolved",
                ));
            }
        };
        match MessageEnvelope::from_value(&reply).ok().filter(|reply| accepts_reply(request, reply)) {
            Some(reply) => Ok(ToolResult {
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                completed_at: context.now.clone(),
                metadata: None,
                outcome: ToolOutcome::Succeeded { output: reply.payload },
            }),
            None => {
                Ok(failure(call, context, ReasonCode::InvalidMessageReply, "the reply does not answer the request"))
            }
        }
    }
}

fn abort_error(error: KernelError) -> HandlerError {
    match error {
        KernelError::AuditUnavailable(outage) => HandlerError::AuditUnavailable(outage),
        KernelError::Aborted(_) => HandlerError::Aborted,
        other => HandlerError::Failed(other.to_string()),
    }
}

/// The reply acceptance rule (M26): it answers this request, its addresses
/// are the request's reversed, and purpose and trace are unchanged.
#[must_use]
pub fn accepts_reply(request: &MessageEnvelope, reply: &MessageEnvelope) -> bool {
    reply.reply_to.as_deref() == Some(request.id.as_str())
        && reply.sender == request.receiver
        && reply.receiver == request.sender
        && reply.purpose == request.purpose
        && reply.trace_id == request.trace_id
}

fn failure(call: &ParsedCall, context: &AccessContext, code: ReasonCode, message: &str) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        tool: call.tool.clone(),
        completed_at: context.now.clone(),
        metadata: None,
        outcome: ToolOutcome::Failed { error: ProtocolError::new(code.as_str(), message) },
    }
}

/// Parses the two model-authored arguments strictly (M17).
///
/// # Errors
/// Any other key, a missing one, or a recipient that is not a strict address
/// with a tidy id of at most 256 code points.
pub fn parse_request_arguments(arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    if let Some(key) = arguments.keys().find(|k| *k != "recipient" && *k != "payload") {
        return Err(format!("unexpected argument {key}"));
    }
    let payload = arguments.get("payload").ok_or("missing payload")?;
    let recipient = arguments.get("recipient").ok_or("missing recipient")?;
    let address = Address::deserialize(recipient).map_err(|e| e.to_string())?;
    let id = address.id();
    if id.is_empty() || id.trim() != id || id.chars().count() > 256 {
        return Err("the recipient id must be 1..256 code points without padding".to_string());
    }
    let mut parsed = Map::new();
    parsed.insert("recipient".into(), json!(address));
    parsed.insert("payload".into(), payload.clone());
    Ok(parsed)
}

impl ToolHandler for MessageRequestTool {
    fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        parse_request_arguments(arguments)
    }

    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        let envelope = match self.build_envelope(context, call) {
            Ok(envelope) => envelope,
            Err(detail) => return Some(Err(detail)),
        };
        let requirement = match self.core.send_requirement(context, &envelope) {
            Ok(requirement) => requirement,
            Err(detail) => {
                self.core.report(ProviderError {
                    origin: ProviderErrorOrigin::MessageCapabilityResolver,
                    detail: detail.clone(),
                });
                return Some(Err(detail));
            }
        };
        Some(Ok(Resolution { requirement, prepared: Some(Prepared::new(envelope)) }))
    }

    fn invoke<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ParsedCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>> {
        Box::pin(self.run(context, call, signal))
    }
}

/// The definition `messages.request` is registered with, for hosts that
/// list it in a turn request whether or not the kernel registers it.
#[must_use]
pub fn messages_request_definition() -> ToolDefinition {
    ToolDefinition::clone(&DEFINITION)
}

/// The one definition every handler of a run shares.
static DEFINITION: LazyLock<Arc<ToolDefinition>> = LazyLock::new(|| Arc::new(definition()));

/// The request tool's input and output schemas, built once (see
/// `shared_schema` in the world crate).
static SCHEMAS: LazyLock<(SharedObject, SharedObject)> = LazyLock::new(|| {
    let id = json!({"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^\\S(.*\\S)?$"});
    let variant = |kind: &str, field: &str| {
        json!({"type": "object", "additionalProperties": false, "required": ["kind", field],
               "properties": {"kind": {"const": kind}, field: id}})
    };
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["recipient", "payload"],
        "properties": {
            "recipient": {"oneOf": [variant("human", "userId"), variant("agent", "agentId"),
                                    variant("group", "conversationId"), variant("service", "serviceId")]},
            "payload": {}
        }
    });
    let object = |v: Value| SharedObject::new(v.as_object().cloned().unwrap_or_default());
    (object(schema), object(json!({"type": "object"})))
});

fn definition() -> ToolDefinition {
    ToolDefinition {
        name: MESSAGES_REQUEST.to_string(),
        description: "Send an authorized request to another agent and wait for its durable reply".to_string(),
        namespace: "messages".to_string(),
        source: "sharedos".to_string(),
        read_write: ReadWrite::Write,
        input_schema: SharedObject::clone(&SCHEMAS.0),
        output_schema: Some(SharedObject::clone(&SCHEMAS.1)),
        required_capability: Requirement {
            resource: ResourceRef { namespace: MESSAGING_NAMESPACE.to_string(), path: Vec::new(), owner: None },
            action: "send".to_string(),
        },
        annotations: Some(ToolAnnotations { read_only: Some(false), destructive: Some(true), idempotent: Some(false) }),
        metadata: None,
    }
}
