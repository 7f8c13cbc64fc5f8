//! Reading the envelope's event stream: the events a record, a receipt
//! reader and the judge look at (named by the envelope's `EventKind`), the
//! runtime announcements inside them, and their payload fields.
//!
//! Payloads are untrusted JSON; every accessor answers `None` (or nothing)
//! for a shape it does not recognise rather than failing.

use serde_json::Value;
use sharedos_envelope::events::EventKind;
use sharedos_model::execution::ExecutionEvent;

/// Announcement type: the runtime handed its prompt to the seat.
pub const PROMPT_HANDED: &str = "prompt.handed";
/// Announcement type: one attempt receipt of the scripted adversary.
pub const CONFORMANCE_ATTEMPT: &str = "conformance.attempt";
/// Announcement type (older runtimes): the runtime asked for a human.
pub const ESCALATION_ASKED: &str = "escalation.asked";

/// A runtime announcement unwrapped from a `runtime.event`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Announcement<'a> {
    /// The announcing runtime's id, when the wrapper names one.
    pub runtime_id: Option<&'a str>,
    /// The announcement's own type.
    pub kind: &'a str,
    /// The announcement's payload.
    pub data: &'a Value,
}

/// Every runtime announcement, in event order.
pub fn announcements(events: &[ExecutionEvent]) -> impl Iterator<Item = Announcement<'_>> {
    events.iter().filter(|e| e.kind == EventKind::RuntimeEvent.as_str()).filter_map(|e| {
        let kind = e.data.get("type")?.as_str()?;
        let data = e.data.get("data")?;
        let runtime_id = e.data.get("runtime").and_then(|r| r.get("id")).and_then(Value::as_str);
        Some(Announcement { runtime_id, kind, data })
    })
}

/// The first event of a type.
#[must_use]
pub fn first_of(events: &[ExecutionEvent], kind: EventKind) -> Option<&ExecutionEvent> {
    events.iter().find(|e| e.kind == kind.as_str())
}

/// The last event of a type.
#[must_use]
pub fn last_of(events: &[ExecutionEvent], kind: EventKind) -> Option<&ExecutionEvent> {
    events.iter().rev().find(|e| e.kind == kind.as_str())
}

/// True when the runtime was started (a `turn.started` event exists).
#[must_use]
pub fn runtime_started(events: &[ExecutionEvent]) -> bool {
    first_of(events, EventKind::TurnStarted).is_some()
}

/// The tool names the runtime was shown, from `turn.started`.
#[must_use]
pub fn visible_tools(events: &[ExecutionEvent]) -> Vec<String> {
    first_of(events, EventKind::TurnStarted)
        .and_then(|e| e.data.get("visibleTools"))
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The runtime id `turn.started` names in its provenance.
#[must_use]
pub fn started_runtime_id(events: &[ExecutionEvent]) -> Option<&str> {
    first_of(events, EventKind::TurnStarted)
        .and_then(|e| e.data.get("runtime"))
        .and_then(|r| r.get("id"))
        .and_then(Value::as_str)
}

/// A string field of an event's payload.
#[must_use]
pub fn data_str<'a>(event: &'a ExecutionEvent, key: &str) -> Option<&'a str> {
    event.data.get(key).and_then(Value::as_str)
}
