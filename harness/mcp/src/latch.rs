//! The escalation latch: the one place on the MCP path where an ask to
//! escalate is taken, and where every call after it is turned away.
//!
//! A vendor CLI runs its own loop, so nothing stops it calling on after it
//! asked for a human. The latch answers the ask itself (it never reaches
//! the envelope, exactly as a driver's ask does not), then answers every
//! later call `escalation_pending` without executing it, and at the end of
//! the turn turns the harness's own ending into an escalation.

use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_drivers::seat::escalation_request;
use sharedos_drivers::standard_loop::ESCALATION_ASKED_ANNOTATION;
use sharedos_envelope::error::HostError;
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_envelope::runtime::{escalate, with_metadata};
use sharedos_model::tool::{ProtocolError, ToolCall, ToolOutcome, ToolResult};
use sharedos_port::escalation::ESCALATION_TOOL;
use std::cell::RefCell;
use std::rc::Rc;

/// The code of a call made after the ask.
pub const ESCALATION_PENDING: &str = "escalation_pending";
/// What a call after the ask is told.
pub const ESCALATION_PENDING_MESSAGE: &str = "This turn ended by asking a human to decide; nothing further runs on it.";
/// What the ask is told: the turn is over, and nothing more should be called.
pub const ESCALATION_NOTE: &str = "This turn is over: make no further tool calls. The request will be recorded for \
                                   a human reviewer when the turn ends.";

/// The instant stamped on the results the latch answers itself.
pub type LatchClock = Rc<dyn Fn() -> String>;

/// One turn's latch over its host.
pub struct EscalationLatch {
    host: RuntimeHost,
    offered: bool,
    clock: LatchClock,
    state: RefCell<Latched>,
}

#[derive(Debug, Default)]
struct Latched {
    reason: Option<String>,
    afterwards: u64,
}

impl std::fmt::Debug for EscalationLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EscalationLatch").field("offered", &self.offered).field("state", &self.state).finish()
    }
}

impl EscalationLatch {
    /// The latch of a turn whose catalogue offers the affordance when
    /// `offered`; results it answers itself are stamped by `clock`.
    #[must_use]
    pub fn new(host: RuntimeHost, offered: bool, clock: LatchClock) -> EscalationLatch {
        EscalationLatch { host, offered, clock, state: RefCell::default() }
    }

    /// Answers one call: refused after an ask (D46), taken when it is the
    /// offered ask (D45), otherwise the envelope's and the kernel's to
    /// decide (an ungranted ask is refused there, D48). No step is declared:
    /// the harness's loop is its own.
    pub fn invoke(&self, call: ToolCall) -> LocalBoxFuture<'static, Result<ToolResult, HostError>> {
        let mut state = self.state.borrow_mut();
        if state.reason.is_some() {
            state.afterwards += 1;
            let mut error = ProtocolError::new(ESCALATION_PENDING, ESCALATION_PENDING_MESSAGE);
            error.retryable = Some(false);
            return Box::pin(std::future::ready(Ok(self.answer(&call, ToolOutcome::Denied { error }))));
        }
        let reason = if self.offered { escalation_request(&call.tool, Some(&call.arguments)) } else { None };
        let Some(reason) = reason else {
            drop(state);
            return self.host.invoke_tool(call, ToolInvocationOptions::none());
        };
        state.reason = Some(reason.clone());
        // Stating the ask never fails on host state; an error here could only
        // turn an accepted ask into a transport fault.
        let _ = self.host.annotate(ESCALATION_ASKED_ANNOTATION, json!({ "tool": ESCALATION_TOOL, "reason": reason }));
        let output = json!({ "escalated": true, "reason": reason, "note": ESCALATION_NOTE });
        Box::pin(std::future::ready(Ok(self.answer(&call, ToolOutcome::Succeeded { output }))))
    }

    fn answer(&self, call: &ToolCall, outcome: ToolOutcome) -> ToolResult {
        ToolResult {
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            completed_at: (self.clock)(),
            metadata: None,
            outcome,
        }
    }

    /// The ask's reason, once one was taken.
    #[must_use]
    pub fn reason(&self) -> Option<String> {
        self.state.borrow().reason.clone()
    }

    /// The turn's outcome: the harness's own `outcome` with `metadata`
    /// merged over its own, or, once an ask was taken, an escalation that
    /// says how the harness itself ended (D47) and how many calls it made
    /// after asking (D46).
    #[must_use]
    pub fn settle(&self, outcome: Value, metadata: Map<String, Value>) -> Value {
        let mut merged = outcome.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
        merged.extend(metadata);
        let state = self.state.borrow();
        let Some(reason) = &state.reason else {
            return with_metadata(outcome, merged);
        };
        merged.insert("harnessOutcome".into(), outcome.get("type").cloned().unwrap_or(Value::Null));
        if let Some(code) = outcome.pointer("/error/code") {
            merged.insert("harnessErrorCode".into(), code.clone());
        }
        merged.insert("callsAfterEscalation".into(), json!(state.afterwards));
        with_metadata(escalate(reason), merged)
    }
}
