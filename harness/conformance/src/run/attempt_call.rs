//! The arguments an attempt is issued with, the same whichever seat issues
//! it: the declared arguments plus, for a forgery, a schema-valid grant
//! built from the turn's own context and carried as plain data.

use serde_json::{Map, Value};
use sharedos_grading::input::script::{AttackScript, Attempt, Forge};
use sharedos_grading::record::receipt::derived_call_id;
use sharedos_model::access::{AccessContext, RuntimeVisibleContext};
use sharedos_model::address::Address;
use sharedos_model::capability::{Constraints, Grant};
use sharedos_model::execution::RuntimeTurnRequest;
use sharedos_model::tool::ToolCall;

/// The parts of a turn's context a forgery copies, so that it is
/// schema-valid and names the turn's own principals.
#[derive(Debug, Clone, PartialEq)]
pub struct IssueContext {
    /// The world.
    pub namespace_id: String,
    /// The acting principal (the forgery's subject).
    pub actor: Address,
    /// The owner (the forgery's issuer).
    pub owner: Address,
    /// The purpose.
    pub purpose: String,
    /// The turn's instant (the forgery's issue time).
    pub now: String,
}

impl From<&RuntimeVisibleContext> for IssueContext {
    fn from(c: &RuntimeVisibleContext) -> IssueContext {
        IssueContext {
            namespace_id: c.namespace_id.clone(),
            actor: c.actor.clone(),
            owner: c.owner.clone(),
            purpose: c.purpose.clone(),
            now: c.now.clone(),
        }
    }
}

impl From<&AccessContext> for IssueContext {
    fn from(c: &AccessContext) -> IssueContext {
        IssueContext {
            namespace_id: c.namespace_id.clone(),
            actor: c.actor.clone(),
            owner: c.owner.clone(),
            purpose: c.purpose.clone(),
            now: c.now.clone(),
        }
    }
}

/// The arguments `attempt` is issued with in a turn whose context is `context`.
#[must_use]
pub fn attempt_arguments(attempt: &Attempt, context: &IssueContext) -> Map<String, Value> {
    let mut arguments = attempt.tool_arguments.clone();
    if let Some(forge) = &attempt.forge {
        arguments.insert(forge.embed_as.clone(), forged_grant(forge, context));
    }
    arguments
}

/// A schema-valid grant built from the turn's context, to be carried as data.
fn forged_grant(forge: &Forge, context: &IssueContext) -> Value {
    let grant = Grant {
        id: forge.grant_id.clone(),
        namespace_id: context.namespace_id.clone(),
        subject: context.actor.clone(),
        issuer: context.owner.clone(),
        capabilities: forge.capabilities.clone(),
        constraints: Constraints { purposes: Some(vec![context.purpose.clone()]), ..Constraints::default() },
        issued_at: context.now.clone(),
        revoked_at: None,
        parent_grant_id: None,
        metadata: None,
    };
    serde_json::to_value(grant).unwrap_or(Value::Null)
}

/// The call an attempt makes in the turn `request` describes: its derived
/// id, the tool, the arguments above, the turn's trace (or the attempt's
/// own) and instant; `None` for an attempt that names no tool.
#[must_use]
pub fn attempt_call(script: &AttackScript, attempt: &Attempt, request: &RuntimeTurnRequest) -> Option<ToolCall> {
    let tool = attempt.tool.clone()?;
    Some(ToolCall {
        id: derived_call_id(&request.execution_id, &script.id, &attempt.id),
        tool,
        arguments: attempt_arguments(attempt, &IssueContext::from(&request.context)),
        trace_id: attempt.trace_id.clone().unwrap_or_else(|| request.context.trace_id.clone()),
        requested_at: request.context.now.clone(),
    })
}
