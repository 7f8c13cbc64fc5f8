//! The messages of `sharedos-runtime/1` (`harness/process/PROTOCOL.md`):
//! what the harness writes, and what a runtime may write, read strictly.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sharedos_model::execution::{RuntimeLimits, RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::tool::{ToolCall, ToolResult};

use sharedos_conformance_metadata::breach::RuntimeProtocol;

/// The protocol's name and version, exchanged first.
pub const PROTOCOL: &str = RuntimeProtocol::CURRENT.name();

/// The version before the fence: a runtime that names it is told what
/// changed rather than only that it differs.
pub const PREVIOUS_PROTOCOL: &str = RuntimeProtocol::V1.name();

pub use sharedos_conformance_metadata::launch::Clock;

/// The harness's identity in `hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HarnessIdentity {
    /// `sharedos-conformance`.
    pub name: String,
    /// The harness version.
    pub version: String,
}

/// Why the host refused a request, as the runtime is told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostErrorMessage {
    /// The kind of refusal (`closed`, `invalid_call`, `aborted`, ...).
    pub code: String,
    /// The host's own words.
    pub message: String,
    /// For `aborted`: why the turn stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A line the harness writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum HarnessMessage<'a> {
    /// The first line.
    Hello {
        /// [`PROTOCOL`].
        protocol: &'static str,
        /// Who is asking.
        harness: HarnessIdentity,
        /// The clock the runtime works against.
        clock: Clock,
    },
    /// A turn starts.
    Turn {
        /// The turn's id (its execution id).
        turn: &'a str,
        /// The sanitized request, as a seated runtime receives it.
        request: &'a RuntimeTurnRequest,
        /// The turn's resolved limits.
        limits: RuntimeLimits,
        /// A scripted seat's steps for this turn.
        #[serde(skip_serializing_if = "Option::is_none")]
        script: Option<&'a Value>,
    },
    /// The answer to an `invokeTool`.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        /// The turn.
        turn: &'a str,
        /// The request's id.
        id: &'a str,
        /// What SharedOS answered.
        result: &'a ToolResult,
    },
    /// An `emit` or `annotate` was accepted.
    Ack {
        /// The turn.
        turn: &'a str,
        /// The request's id.
        id: &'a str,
    },
    /// The host refused a request.
    HostError {
        /// The turn.
        turn: &'a str,
        /// The request's id.
        id: &'a str,
        /// Why.
        error: HostErrorMessage,
    },
    /// The soft deadline fired.
    Draining {
        /// The turn.
        turn: &'a str,
        /// The envelope's fixed reason.
        reason: &'static str,
    },
    /// The hard signal fired.
    Abort {
        /// The turn.
        turn: &'a str,
        /// Why.
        reason: &'static str,
    },
    /// The instant a `wait` asked for has come.
    #[serde(rename_all = "camelCase")]
    Time {
        /// The turn.
        turn: &'a str,
        /// Milliseconds since the turn's origin.
        now_ms: u64,
    },
    /// The turn has ended.
    Closed {
        /// The turn.
        turn: &'a str,
    },
    /// The runtime owes nothing more of the turn: every line it writes
    /// before it echoes this belongs to the turn.
    Fence {
        /// The turn that ended.
        turn: &'a str,
        /// The fence's number: how many fences this process has been
        /// written, this one included.
        fence: u64,
    },
}

/// A runtime's declared step for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvokeOptions {
    /// The step, kept as a JSON number so a malformed claim is representable.
    #[serde(default)]
    pub step: Option<f64>,
}

/// What a runtime reports when it throws.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thrown {
    /// Its own words.
    pub message: String,
}

/// An event a runtime emits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmittedEvent {
    /// The event type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Any JSON (`null` when absent).
    #[serde(default)]
    pub data: Value,
}

/// A line a runtime writes, read strictly: an unknown key is refused.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum RuntimeMessage {
    /// The runtime's identity.
    Ready {
        /// Must be [`PROTOCOL`].
        protocol: String,
        /// Recorded as the record's runtime provenance.
        manifest: RuntimeManifest,
    },
    /// `host.invokeTool`.
    InvokeTool {
        /// The turn.
        turn: String,
        /// The request's id.
        id: String,
        /// The call.
        call: ToolCall,
        /// The declared step.
        #[serde(default)]
        options: InvokeOptions,
    },
    /// `host.emit`.
    Emit {
        /// The turn.
        turn: String,
        /// The request's id.
        id: String,
        /// The event.
        event: EmittedEvent,
    },
    /// `host.annotate`.
    Annotate {
        /// The turn.
        turn: String,
        /// The request's id.
        id: String,
        /// The annotation key.
        key: String,
        /// Its value.
        value: Value,
    },
    /// The runtime is idle until the harness writes, or until an instant.
    #[serde(rename_all = "camelCase")]
    Wait {
        /// The turn.
        turn: String,
        /// Milliseconds since the turn's origin.
        #[serde(default)]
        until_ms: Option<u64>,
        /// How many lines the runtime has read from the harness so far: the
        /// wait stands only when it has read every line written.
        seen: u64,
    },
    /// The plugin returned.
    Outcome {
        /// The turn.
        turn: String,
        /// Raw, so a malformed outcome is representable.
        outcome: Value,
    },
    /// The plugin threw.
    Thrown {
        /// The turn.
        turn: String,
        /// What it threw.
        error: Thrown,
    },
    /// A scripted seat's receipts of the turn, after `closed`.
    Report {
        /// The turn.
        turn: String,
        /// How many lines the runtime had read when it wrote the report: it
        /// counts `closed`, or the report came before the turn closed.
        seen: u64,
        /// Every receipt, as the seat made them.
        receipts: Vec<Map<String, Value>>,
    },
    /// The echo of a `fence`: the runtime has written everything it will
    /// write about the turn.
    Fenced {
        /// The turn that ended.
        turn: String,
        /// The number of the fence it echoes.
        fence: u64,
    },
}

/// Every `type` a runtime may write.
pub const RUNTIME_TYPES: &[&str] =
    &["ready", "invokeTool", "emit", "annotate", "wait", "outcome", "thrown", "report", "fenced"];

impl RuntimeMessage {
    /// The message's `type`, as the runtime spelled it.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            RuntimeMessage::Ready { .. } => "ready",
            RuntimeMessage::InvokeTool { .. } => "invokeTool",
            RuntimeMessage::Emit { .. } => "emit",
            RuntimeMessage::Annotate { .. } => "annotate",
            RuntimeMessage::Wait { .. } => "wait",
            RuntimeMessage::Outcome { .. } => "outcome",
            RuntimeMessage::Thrown { .. } => "thrown",
            RuntimeMessage::Report { .. } => "report",
            RuntimeMessage::Fenced { .. } => "fenced",
        }
    }

    /// The turn the message is about (`None` for `ready`).
    #[must_use]
    pub fn turn(&self) -> Option<&str> {
        match self {
            RuntimeMessage::Ready { .. } => None,
            RuntimeMessage::InvokeTool { turn, .. }
            | RuntimeMessage::Emit { turn, .. }
            | RuntimeMessage::Annotate { turn, .. }
            | RuntimeMessage::Wait { turn, .. }
            | RuntimeMessage::Outcome { turn, .. }
            | RuntimeMessage::Thrown { turn, .. }
            | RuntimeMessage::Report { turn, .. }
            | RuntimeMessage::Fenced { turn, .. } => Some(turn),
        }
    }
}
