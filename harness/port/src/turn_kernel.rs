//! `TurnKernel`: the port the envelope calls. The reference kernel implements
//! it; tests may seat doubles.

use crate::error::KernelError;
use crate::signal::AbortSignal;
use futures::future::LocalBoxFuture;
use sharedos_model::access::{AccessContext, Reach};
use sharedos_model::address::Address;
use sharedos_model::audit::Source;
use sharedos_model::capability::Decision;
use sharedos_model::execution::{Escalation, ExecutionStatus};
use sharedos_model::tool::{ToolCall, ToolDefinition, ToolResult};
use std::rc::Rc;
use std::sync::Arc;

/// A turn's authority lease; closing it is idempotent.
pub trait TurnScope {
    /// Releases the lease.
    fn close(&self);
}

/// What `recordTurnEnd` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnd {
    /// The turn's execution id.
    pub execution_id: String,
    /// How it ended.
    pub status: ExecutionStatus,
    /// The error code, for denied, failed and cancelled turns.
    pub reason_code: Option<String>,
    /// Who ended a failed turn.
    pub ended_by: Option<Source>,
    /// True for `audit_unavailable`.
    pub fail_closed: bool,
}

/// What `recordRefusedCall` writes for an envelope refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedCall {
    /// The call.
    pub call_id: String,
    /// The tool asked for.
    pub tool: String,
    /// The code the runtime was given.
    pub reason_code: String,
    /// The specific situation (`not_offered`).
    pub cause: Option<String>,
}

/// The kernel operations the envelope needs for one turn.
pub trait TurnKernel {
    /// Loads the turn's authority once and holds it on a lease.
    fn open_turn_authority<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Rc<dyn TurnScope>, KernelError>>;

    /// Authorizes `sharedos.execution / [kind,id] / invoke` for `agent`, consuming.
    fn admit_turn<'a>(
        &'a self,
        context: &'a AccessContext,
        agent: &'a Address,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Decision, KernelError>>;

    /// Describes what the turn can reach.
    fn reach<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Reach, KernelError>>;

    /// The permission-filtered catalogue.
    fn list_tools<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Vec<Arc<ToolDefinition>>, KernelError>>;

    /// Mediates one call (K34–K45).
    fn invoke_tool<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ToolCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, KernelError>>;

    /// Records a granted escalation.
    fn record_escalation<'a>(
        &'a self,
        context: &'a AccessContext,
        reason: &'a str,
        execution_id: &'a str,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Escalation, KernelError>>;

    /// Writes `turn.ended` (post-effect: failures are reported, never raised).
    fn record_turn_end<'a>(&'a self, context: &'a AccessContext, end: &'a TurnEnd) -> LocalBoxFuture<'a, ()>;

    /// Writes `tool.invoked` for an envelope refusal (post-effect).
    fn record_refused_call<'a>(
        &'a self,
        context: &'a AccessContext,
        refused: &'a RefusedCall,
    ) -> LocalBoxFuture<'a, ()>;
}
