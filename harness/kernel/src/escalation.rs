//! Escalation: a terminal turn outcome that grants nothing (K78, K79).
//!
//! The `sharedos.escalate` affordance is catalogued and permission-filtered
//! like any tool but never executed: a driver recognises its name and ends
//! the turn; forwarding the call fails `escalation_not_terminated`.

use crate::kernel::Kernel;
use crate::lease_table::check_abort;
use crate::ports::{HandlerError, ParsedCall, ToolHandler};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_authz::required::request_id;
use sharedos_model::access::AccessContext;
use sharedos_model::audit::{AuditOutcome, AuditType};
use sharedos_model::capability::{CapabilityRequest, Requirement, ResourceRef};
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::Escalation;
use sharedos_model::tool::{ProtocolError, ReadWrite, SharedObject, ToolDefinition, ToolOutcome, ToolResult};
use sharedos_port::error::KernelError;
use sharedos_port::escalation::ESCALATION_TOOL;
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

/// Longest escalation reason.
pub const MAX_REASON_CHARS: usize = 512;

/// The `sharedos.escalate` handler.
struct EscalationTool {
    definition: Arc<ToolDefinition>,
}

/// The escalation tool's input schema, built once (see
/// `shared_schema` in the world crate).
static REASON_SCHEMA: LazyLock<SharedObject> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["reason"],
        "properties": {"reason": {"type": "string", "minLength": 1, "maxLength": MAX_REASON_CHARS}}
    });
    SharedObject::new(schema.as_object().cloned().unwrap_or_default())
});

/// A fresh `sharedos.escalate` handler for a kernel's static registry.
#[must_use]
pub fn escalation_tool() -> Rc<dyn ToolHandler> {
    Rc::new(EscalationTool { definition: Arc::clone(&DEFINITION) })
}

/// The one definition every handler of a run shares.
static DEFINITION: LazyLock<Arc<ToolDefinition>> = LazyLock::new(|| {
    Arc::new(ToolDefinition {
        name: ESCALATION_TOOL.to_string(),
        description: "Stop and ask a human to review; ends the turn as escalated".to_string(),
        namespace: "sharedos".to_string(),
        source: "sharedos".to_string(),
        read_write: ReadWrite::Write,
        input_schema: SharedObject::clone(&REASON_SCHEMA),
        output_schema: None,
        required_capability: Requirement {
            resource: ResourceRef {
                namespace: "sharedos".to_string(),
                path: vec!["escalation".to_string()],
                owner: None,
            },
            action: "request".to_string(),
        },
        annotations: None,
        metadata: None,
    })
});

impl ToolHandler for EscalationTool {
    fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        if arguments.keys().any(|k| k != "reason") {
            return Err("only a reason may be given".to_string());
        }
        match arguments.get("reason").and_then(Value::as_str) {
            Some(reason) if (1..=MAX_REASON_CHARS).contains(&reason.chars().count()) => Ok(arguments.clone()),
            _ => Err("a reason of 1..512 characters is required".to_string()),
        }
    }

    fn invoke<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ParsedCall,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>> {
        let code = ReasonCode::EscalationNotTerminated;
        let result = ToolResult {
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            completed_at: context.now.clone(),
            metadata: None,
            outcome: ToolOutcome::Failed {
                error: ProtocolError::new(code.as_str(), "escalation ends the turn; it is never executed"),
            },
        };
        Box::pin(async move { Ok(result) })
    }
}

impl Kernel {
    /// Records a granted escalation: one `escalation.requested` record
    /// (post-effect), reviewer the context owner, status pending (K78).
    /// A requested authority's identity fields are re-minted from the context.
    ///
    /// # Errors
    /// An abort, or a reason longer than 512 characters.
    pub async fn record_escalation_with(
        &self,
        context: &AccessContext,
        reason: &str,
        requested_authority: Option<CapabilityRequest>,
        execution_id: Option<&str>,
        signal: &AbortSignal,
    ) -> Result<Escalation, KernelError> {
        check_abort(signal)?;
        let length = reason.chars().count();
        if length == 0 || length > MAX_REASON_CHARS {
            return Err(KernelError::InvalidInput("give an escalation reason of 1..512 characters".to_string()));
        }
        let requested_authority = requested_authority.map(|request| CapabilityRequest {
            id: request_id(context, &request.capabilities, &request.purpose, request.constraints.as_ref())
                .unwrap_or_else(|| request.id.clone()),
            namespace_id: context.namespace_id.clone(),
            requester: context.actor.clone(),
            owner: context.owner.clone(),
            requested_at: context.now.clone(),
            ..request
        });
        let escalation = Escalation {
            reason: reason.to_string(),
            reviewer: context.owner.clone(),
            requested_at: context.now.clone(),
            requested_authority: requested_authority.clone(),
            status: "pending".to_string(),
        };
        let mut event = self.core.event(context, AuditType::EscalationRequested, AuditOutcome::Escalated);
        event.reason = Some(ReasonCode::EscalationRequested.as_str().to_string());
        event.operation_id = execution_id.map(str::to_string);
        event.requested_authority = requested_authority;
        let mut metadata = Map::new();
        metadata.insert("detail".into(), Value::from(reason));
        metadata.insert("reviewer".into(), json!(context.owner));
        metadata.insert("reviewerAssumed".into(), Value::Bool(true));
        metadata.insert("resolution".into(), Value::from("pending"));
        event.metadata = Some(metadata);
        self.core.write_post(&event).await;
        Ok(escalation)
    }
}
