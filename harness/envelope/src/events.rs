//! The turn's event log: sequence numbers, ids, clock, observers, and the
//! closed vocabulary of event types only the envelope may append.

use crate::options::{Clock, EventHook, IdFactory};
use serde_json::{json, Map, Value};
use sharedos_model::execution::ExecutionEvent;
use sharedos_model::message::PROTOCOL_VERSION;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

/// The envelope's event types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Context validation or admission refused the turn.
    TurnDenied,
    /// The turn opened and the runtime is about to run.
    TurnStarted,
    /// A call passed the liveness and shape checks.
    ToolRequested,
    /// A call was refused by the envelope or answered by the kernel.
    ToolCompleted,
    /// The runtime emitted an observation.
    RuntimeEvent,
    /// The runtime completed.
    TurnCompleted,
    /// The escalation was recorded.
    TurnEscalated,
    /// The turn failed (runtime or envelope source).
    TurnFailed,
    /// Deadline, host cancellation or drain.
    TurnCancelled,
}

impl EventKind {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::TurnDenied => "turn.denied",
            EventKind::TurnStarted => "turn.started",
            EventKind::ToolRequested => "tool.requested",
            EventKind::ToolCompleted => "tool.completed",
            EventKind::RuntimeEvent => "runtime.event",
            EventKind::TurnCompleted => "turn.completed",
            EventKind::TurnEscalated => "turn.escalated",
            EventKind::TurnFailed => "turn.failed",
            EventKind::TurnCancelled => "turn.cancelled",
        }
    }
}

/// Appends events with gapless sequence numbers and shows each to the observers.
pub(crate) struct EventLog {
    events: RefCell<Vec<ExecutionEvent>>,
    clock: Rc<dyn Clock>,
    ids: Rc<dyn IdFactory>,
    execution_id: String,
    trace_id: String,
    observers: Vec<EventHook>,
}

impl EventLog {
    pub(crate) fn new(
        clock: Rc<dyn Clock>,
        ids: Rc<dyn IdFactory>,
        execution_id: &str,
        trace_id: &str,
        observers: Vec<EventHook>,
    ) -> EventLog {
        EventLog {
            events: RefCell::new(Vec::new()),
            clock,
            ids,
            execution_id: execution_id.to_string(),
            trace_id: trace_id.to_string(),
            observers,
        }
    }

    /// Appends one event and calls every observer; what an observer throws
    /// is swallowed.
    pub(crate) fn emit(&self, kind: EventKind, data: Value) {
        let sequence = self.events.borrow().len() as u64;
        let event = ExecutionEvent {
            version: PROTOCOL_VERSION.to_string(),
            event_id: self.ids.next_id(),
            execution_id: self.execution_id.clone(),
            trace_id: self.trace_id.clone(),
            sequence,
            kind: kind.as_str().to_string(),
            data,
            occurred_at: self.clock.now(),
        };
        if self.observers.is_empty() {
            self.events.borrow_mut().push(event);
            return;
        }
        self.events.borrow_mut().push(event.clone());
        for observer in &self.observers {
            let _ = catch_unwind(AssertUnwindSafe(|| observer(&event)));
        }
    }

    /// Every event so far.
    pub(crate) fn snapshot(&self) -> Vec<ExecutionEvent> {
        self.events.borrow().clone()
    }

    /// The `source` of the last `turn.failed` event, if any.
    pub(crate) fn last_failure_source(&self) -> Option<String> {
        self.events
            .borrow()
            .iter()
            .rev()
            .find(|e| e.kind == EventKind::TurnFailed.as_str())
            .and_then(|e| e.data.get("source").and_then(Value::as_str).map(str::to_string))
    }
}

/// `tool.requested` / `tool.completed` payload.
pub(crate) fn tool_data(call_id: &str, tool: &str, step: Option<u64>, status: Option<(&str, Option<&str>)>) -> Value {
    let mut data = Map::new();
    data.insert("callId".into(), json!(call_id));
    if let Some((status, code)) = status {
        data.insert("status".into(), json!(status));
        if let Some(code) = code {
            data.insert("code".into(), json!(code));
        }
    }
    data.insert("tool".into(), json!(tool));
    if let Some(step) = step {
        data.insert("step".into(), json!(step));
    }
    Value::Object(data)
}

/// `turn.failed` payload.
pub(crate) fn failed_data(code: &str, source: &str) -> Value {
    json!({ "code": code, "source": source })
}
