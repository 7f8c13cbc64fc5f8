//! The turn's event log: sequence numbers, ids, clock, observers, and the
//! closed vocabulary of event types only the envelope may append.

use crate::options::{Clock, EventHook, IdFactory};
use serde_json::{json, Map, Value};
use sharedos_model::execution::ExecutionEvent;
use sharedos_model::message::PROTOCOL_VERSION;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Arc;

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
    /// Every event type, in the order a turn can emit them.
    pub const ALL: [EventKind; 9] = [
        EventKind::TurnDenied,
        EventKind::TurnStarted,
        EventKind::ToolRequested,
        EventKind::ToolCompleted,
        EventKind::RuntimeEvent,
        EventKind::TurnCompleted,
        EventKind::TurnEscalated,
        EventKind::TurnFailed,
        EventKind::TurnCancelled,
    ];

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
    /// The events not yet handed to a result.
    events: RefCell<Vec<ExecutionEvent>>,
    /// How many events [`EventLog::take`] has handed out, so sequence
    /// numbers stay gapless across it.
    taken: Cell<u64>,
    /// The `source` of the last `turn.failed` event handed out.
    taken_failure_source: RefCell<Option<String>>,
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
            taken: Cell::new(0),
            taken_failure_source: RefCell::new(None),
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
        let sequence = self.taken.get() + self.events.borrow().len() as u64;
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

    /// Every event not yet taken, moved out for the turn's result (which
    /// is built once, so the events need not be copied); later events
    /// continue the sequence.
    pub(crate) fn take(&self) -> Arc<[ExecutionEvent]> {
        let events = std::mem::take(&mut *self.events.borrow_mut());
        if let Some(source) = failure_source(&events) {
            *self.taken_failure_source.borrow_mut() = Some(source);
        }
        self.taken.set(self.taken.get() + events.len() as u64);
        events.into()
    }

    /// The `source` of the last `turn.failed` event, if any, taken or not.
    pub(crate) fn last_failure_source(&self) -> Option<String> {
        failure_source(&self.events.borrow()).or_else(|| self.taken_failure_source.borrow().clone())
    }
}

/// The `source` of the last `turn.failed` event of `events`.
fn failure_source(events: &[ExecutionEvent]) -> Option<String> {
    events
        .iter()
        .rev()
        .find(|e| e.kind == EventKind::TurnFailed.as_str())
        .and_then(|e| e.data.get("source").and_then(Value::as_str).map(str::to_string))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::SequentialIds;

    /// A clock that never moves.
    struct Fixed;

    impl Clock for Fixed {
        fn now(&self) -> String {
            "2026-08-18T09:00:00.000Z".to_string()
        }
    }

    fn log(observers: Vec<EventHook>) -> EventLog {
        EventLog::new(Rc::new(Fixed), Rc::new(SequentialIds::new("event")), "exec", "trace", observers)
    }

    #[test]
    fn events_after_a_take_continue_the_sequence() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let sink = Rc::clone(&seen);
        let log = log(vec![Rc::new(move |e: &ExecutionEvent| sink.borrow_mut().push(e.sequence))]);
        log.emit(EventKind::TurnStarted, json!({}));
        log.emit(EventKind::TurnCompleted, json!({}));
        let taken = log.take();
        log.emit(EventKind::ToolCompleted, json!({}));
        assert_eq!(taken.iter().map(|e| e.sequence).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(*seen.borrow(), [0, 1, 2]);
        assert_eq!(log.take().iter().map(|e| e.sequence).collect::<Vec<_>>(), [2]);
    }

    /// Every event takes a new id from the executor's `createId`, in the
    /// order emitted; the sequential factory counts from 1.
    #[test]
    fn each_event_takes_a_new_id_from_the_executors_factory() {
        let log = log(Vec::new());
        for kind in [EventKind::TurnStarted, EventKind::ToolCompleted, EventKind::TurnCompleted] {
            log.emit(kind, json!({}));
        }
        let ids: Vec<String> = log.take().iter().map(|e| e.event_id.clone()).collect();
        assert_eq!(ids, ["event-1", "event-2", "event-3"]);
    }

    #[test]
    fn the_failure_source_survives_a_take_and_a_later_failure_wins() {
        let log = log(Vec::new());
        log.emit(EventKind::TurnFailed, json!({ "source": "runtime" }));
        let _ = log.take();
        assert_eq!(log.last_failure_source().as_deref(), Some("runtime"));
        log.emit(EventKind::TurnFailed, json!({ "source": "envelope" }));
        assert_eq!(log.last_failure_source().as_deref(), Some("envelope"));
        let _ = log.take();
        assert_eq!(log.last_failure_source().as_deref(), Some("envelope"));
    }
}
