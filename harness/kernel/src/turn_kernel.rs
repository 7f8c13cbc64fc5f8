//! The envelope's port onto the reference kernel, and the two envelope
//! recorders (`turn.ended`, envelope refusals), both post-effect.

use crate::invoke::catalog_metadata;
use crate::kernel::Kernel;
use futures::future::LocalBoxFuture;
use sharedos_model::access::{AccessContext, Reach};
use sharedos_model::address::Address;
use sharedos_model::audit::{AuditOutcome, AuditType, Source};
use sharedos_model::capability::Decision;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{Escalation, ExecutionStatus};
use sharedos_model::tool::{ToolCall, ToolDefinition, ToolResult};
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use sharedos_port::turn_kernel::{RefusedCall, TurnEnd, TurnKernel, TurnScope};
use std::rc::Rc;
use std::sync::Arc;

impl Kernel {
    /// Writes `turn.ended`: cancelled turns are recorded as failed with
    /// `turn_cancelled`; `endedBy` only on failed turns; no `source`.
    pub async fn write_turn_end(&self, context: &AccessContext, end: &TurnEnd) {
        let outcome = match end.status {
            ExecutionStatus::Succeeded => AuditOutcome::Succeeded,
            ExecutionStatus::Denied => AuditOutcome::Denied,
            ExecutionStatus::Failed | ExecutionStatus::Cancelled => AuditOutcome::Failed,
            ExecutionStatus::Escalated => AuditOutcome::Escalated,
        };
        let reason = match end.status {
            ExecutionStatus::Succeeded => None,
            ExecutionStatus::Cancelled => {
                Some(end.reason_code.clone().unwrap_or_else(|| ReasonCode::TurnCancelled.as_str().to_string()))
            }
            ExecutionStatus::Escalated => {
                Some(end.reason_code.clone().unwrap_or_else(|| ReasonCode::EscalationRequested.as_str().to_string()))
            }
            ExecutionStatus::Denied | ExecutionStatus::Failed => end.reason_code.clone(),
        };
        let mut event = self.core.event(context, AuditType::TurnEnded, outcome);
        event.operation_id = Some(end.execution_id.clone());
        event.reason = reason;
        if end.status == ExecutionStatus::Failed {
            event.ended_by = end.ended_by;
        }
        if end.fail_closed {
            event.fail_closed = Some(true);
        }
        self.core.write_post_owned(event).await;
    }

    /// Writes `tool.invoked` for a call the envelope refused (`source: envelope`).
    pub async fn write_refused_call(&self, context: &AccessContext, refused: &RefusedCall) {
        let mut event = self.core.event(context, AuditType::ToolInvoked, AuditOutcome::Denied);
        event.operation_id = Some(refused.call_id.clone());
        event.tool = Some(refused.tool.clone());
        event.reason = Some(refused.reason_code.clone());
        event.cause = refused.cause.clone();
        event.source = Some(Source::Envelope);
        if ReasonCode::parse(&refused.reason_code).is_some_and(ReasonCode::is_fail_closed) {
            event.fail_closed = Some(true);
        }
        let hash = self.leases.find(context).and_then(|lease| lease.catalog_hash.borrow().clone());
        event.metadata = catalog_metadata(hash.as_deref());
        self.core.write_post_owned(event).await;
    }
}

impl TurnKernel for Kernel {
    fn open_turn_authority<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Rc<dyn TurnScope>, KernelError>> {
        Box::pin(self.open_lease(context, signal))
    }

    fn admit_turn<'a>(
        &'a self,
        context: &'a AccessContext,
        agent: &'a Address,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Decision, KernelError>> {
        Box::pin(Kernel::admit_turn(self, context, agent, signal))
    }

    fn reach<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Reach, KernelError>> {
        Box::pin(Kernel::reach(self, context, signal))
    }

    fn list_tools<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Vec<Arc<ToolDefinition>>, KernelError>> {
        Box::pin(Kernel::list_tools(self, context, signal))
    }

    fn invoke_tool<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ToolCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, KernelError>> {
        Box::pin(Kernel::invoke_tool(self, context, call, signal))
    }

    fn record_escalation<'a>(
        &'a self,
        context: &'a AccessContext,
        reason: &'a str,
        execution_id: &'a str,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Escalation, KernelError>> {
        Box::pin(self.record_escalation_with(context, reason, None, Some(execution_id), signal))
    }

    fn record_turn_end<'a>(&'a self, context: &'a AccessContext, end: &'a TurnEnd) -> LocalBoxFuture<'a, ()> {
        Box::pin(self.write_turn_end(context, end))
    }

    fn record_refused_call<'a>(
        &'a self,
        context: &'a AccessContext,
        refused: &'a RefusedCall,
    ) -> LocalBoxFuture<'a, ()> {
        Box::pin(self.write_refused_call(context, refused))
    }
}
