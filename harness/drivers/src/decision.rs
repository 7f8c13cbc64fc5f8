//! The driver seam: what the standard loop hands a driver's session, what
//! the session answers, and the strict parse that keeps the loop from
//! trusting any answer.
//!
//! A session returns its decision as raw JSON on purpose: the loop parses
//! every value with [`AgentTurnDecision::parse`], so a buggy driver ends the
//! turn `invalid_driver_decision` instead of being believed. Drivers build
//! well-formed values with [`AgentTurnDecision::to_value`].

use crate::transport::TransportError;
use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sharedos_model::canonical::CanonicalError;
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnOutcome, RuntimeTurnRequest};
use sharedos_model::tool::{ProtocolError, ToolCall, ToolResult};
use sharedos_model::validate::Validate;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::rc::Rc;

/// Longest escalation reason, in UTF-16 code units (the unit SharedOS's
/// schema counts).
pub const MAX_REASON_UNITS: usize = 512;

/// Largest integer a declared step may be: JavaScript's safe-integer bound,
/// so a claim never loses precision on its way to the record.
pub const MAX_DECLARED_STEP: u64 = (1 << 53) - 1;

/// What the loop hands a session on each `next`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentTurnInput {
    /// The first `next` of the turn.
    Start,
    /// The answer to the call the previous decision asked for.
    ToolResult {
        /// The envelope's result, refusals included.
        result: ToolResult,
    },
}

/// A session's decision, once parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentTurnDecision {
    /// Asks the host for one tool call.
    ToolCall {
        /// The call, stamped with the turn's trace and instant.
        call: ToolCall,
        /// The step the driver claims the call sits at; the loop's own index when absent.
        step: Option<u64>,
    },
    /// Ends the turn with an answer.
    Complete {
        /// The answer.
        output: Value,
        /// Facts for the result metadata.
        metadata: Option<Map<String, Value>>,
    },
    /// Ends the turn as a failure.
    Fail {
        /// Why.
        error: ProtocolError,
        /// Facts for the result metadata.
        metadata: Option<Map<String, Value>>,
    },
    /// Ends the turn by asking a human.
    Escalate {
        /// Why, trimmed (1..=512 UTF-16 units).
        reason: String,
        /// Facts for the result metadata.
        metadata: Option<Map<String, Value>>,
    },
}

/// Why a value is not a decision.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("accept the driver decision: {0}")]
pub struct DecisionError(pub String);

fn invalid(detail: impl Into<String>) -> DecisionError {
    DecisionError(detail.into())
}

impl AgentTurnDecision {
    /// A `fail` decision with `code` and `message`.
    #[must_use]
    pub fn fail(code: &str, message: &str, metadata: Option<Map<String, Value>>) -> AgentTurnDecision {
        AgentTurnDecision::Fail { error: ProtocolError::new(code, message), metadata }
    }

    /// The decision as the JSON a session returns.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        let mut put = |key: &str, value: Value| {
            map.insert(key.to_string(), value);
        };
        let metadata = match self {
            AgentTurnDecision::ToolCall { call, step } => {
                put("type", Value::from("tool_call"));
                put("call", serde_json::to_value(call).unwrap_or(Value::Null));
                if let Some(step) = step {
                    put("step", Value::from(*step));
                }
                None
            }
            AgentTurnDecision::Complete { output, metadata } => {
                put("type", Value::from("complete"));
                put("output", output.clone());
                metadata.as_ref()
            }
            AgentTurnDecision::Fail { error, metadata } => {
                put("type", Value::from("fail"));
                put("error", serde_json::to_value(error).unwrap_or(Value::Null));
                metadata.as_ref()
            }
            AgentTurnDecision::Escalate { reason, metadata } => {
                put("type", Value::from("escalate"));
                put("reason", Value::from(reason.as_str()));
                metadata.as_ref()
            }
        };
        if let Some(metadata) = metadata {
            map.insert("metadata".to_string(), Value::Object(metadata.clone()));
        }
        Value::Object(map)
    }

    /// The terminal decisions as the runtime outcome they end the turn with;
    /// `None` for a tool call.
    #[must_use]
    pub fn into_outcome(self) -> Option<RuntimeTurnOutcome> {
        match self {
            AgentTurnDecision::ToolCall { .. } => None,
            AgentTurnDecision::Complete { output, metadata } => Some(RuntimeTurnOutcome::Complete { output, metadata }),
            AgentTurnDecision::Fail { error, metadata } => Some(RuntimeTurnOutcome::Fail { error, metadata }),
            AgentTurnDecision::Escalate { reason, metadata } => Some(RuntimeTurnOutcome::Escalate { reason, metadata }),
        }
    }

    /// Parses a session's raw answer strictly (D1, D2): unknown keys, a
    /// malformed call, error, output or metadata, a step that is not a
    /// non-negative integer, and an escalation reason outside 1..=512 units
    /// after trimming are all refused.
    ///
    /// # Errors
    /// What makes `value` not a decision.
    pub fn parse(value: &Value) -> Result<AgentTurnDecision, DecisionError> {
        let map = value.as_object().ok_or_else(|| invalid("a JSON object"))?;
        let kind = map.get("type").and_then(Value::as_str).ok_or_else(|| invalid("a string `type`"))?;
        let allowed: &[&str] = match kind {
            "tool_call" => &["type", "call", "step"],
            "complete" => &["type", "output", "metadata"],
            "fail" => &["type", "error", "metadata"],
            "escalate" => &["type", "reason", "metadata"],
            other => return Err(invalid(format!("a known decision type, not {other:?}"))),
        };
        if let Some(key) = map.keys().find(|key| !allowed.contains(&key.as_str())) {
            return Err(invalid(format!("no key {key:?} in a {kind} decision")));
        }
        match kind {
            "tool_call" => parse_tool_call(map),
            "complete" => {
                let output = map.get("output").cloned().ok_or_else(|| invalid("an `output`"))?;
                Ok(AgentTurnDecision::Complete { output, metadata: parse_metadata(map)? })
            }
            "fail" => {
                let raw = map.get("error").ok_or_else(|| invalid("an `error`"))?;
                let error: ProtocolError =
                    ProtocolError::deserialize(raw).map_err(|e| invalid(format!("a protocol error ({e})")))?;
                error.validate().map_err(|e| invalid(e.to_string()))?;
                Ok(AgentTurnDecision::Fail { error, metadata: parse_metadata(map)? })
            }
            _ => {
                let raw = map.get("reason").and_then(Value::as_str).ok_or_else(|| invalid("a string `reason`"))?;
                let reason = js_trim(raw);
                let units = reason.encode_utf16().count();
                if units == 0 || units > MAX_REASON_UNITS {
                    return Err(invalid("a reason of 1..512 UTF-16 units after trimming"));
                }
                Ok(AgentTurnDecision::Escalate { reason: reason.to_string(), metadata: parse_metadata(map)? })
            }
        }
    }
}

fn parse_tool_call(map: &Map<String, Value>) -> Result<AgentTurnDecision, DecisionError> {
    let raw = map.get("call").ok_or_else(|| invalid("a `call`"))?;
    let call = ToolCall::deserialize(raw).map_err(|e| invalid(format!("a tool call ({e})")))?;
    call.validate().map_err(|e| invalid(e.to_string()))?;
    let step = match map.get("step") {
        None => None,
        Some(value) => Some(parse_step(value).ok_or_else(|| invalid("a `step` that is a non-negative integer"))?),
    };
    Ok(AgentTurnDecision::ToolCall { call, step })
}

/// A non-negative integer as JSON numbers carry it: `3` and `3.0` are the
/// same step, `-1`, `2.5` and `"3"` are not steps.
fn parse_step(value: &Value) -> Option<u64> {
    if let Some(step) = value.as_u64() {
        return (step <= MAX_DECLARED_STEP).then_some(step);
    }
    let number = value.as_f64()?;
    let integral = number.is_finite() && number.fract() == 0.0 && number >= 0.0;
    // Integral and within 0..=2^53-1, so the conversion is exact.
    (integral && number <= MAX_DECLARED_STEP as f64).then_some(number as u64)
}

fn parse_metadata(map: &Map<String, Value>) -> Result<Option<Map<String, Value>>, DecisionError> {
    match map.get("metadata") {
        None => Ok(None),
        Some(Value::Object(metadata)) => Ok(Some(metadata.clone())),
        Some(_) => Err(invalid("a `metadata` that is a JSON object")),
    }
}

/// Trims what JavaScript's `String.prototype.trim` trims: Unicode white
/// space and the byte-order mark.
#[must_use]
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// The status a session is closed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionOutcome {
    /// The session completed the turn.
    Succeeded,
    /// The turn failed (a `fail` decision, a refused decision, a spent
    /// step budget, or a contained driver throw).
    Failed,
    /// The turn was cancelled or drained.
    Cancelled,
    /// The session escalated the turn.
    Escalated,
}

impl SessionOutcome {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SessionOutcome::Succeeded => "succeeded",
            SessionOutcome::Failed => "failed",
            SessionOutcome::Cancelled => "cancelled",
            SessionOutcome::Escalated => "escalated",
        }
    }
}

/// What a driver or its session threw.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DriverError {
    /// The signal handed to the call fired first.
    #[error("finish the driver call before the signal fired ({0:?})")]
    Aborted(AbortReason),
    /// The transport to the harness broke.
    #[error(transparent)]
    Transport(TransportError),
    /// The catalogue cannot be named on the model's wire.
    #[error(transparent)]
    ToolName(#[from] crate::tool_names::ToolNameError),
    /// The seat text could not be hashed.
    #[error("hash the seat text: {0}")]
    Seat(#[from] CanonicalError),
    /// Any other failure of the driver's own.
    #[error("run the driver: {0}")]
    Message(String),
}

impl From<TransportError> for DriverError {
    fn from(error: TransportError) -> DriverError {
        match error {
            TransportError::Aborted(reason) => DriverError::Aborted(reason),
            other => DriverError::Transport(other),
        }
    }
}

/// One turn's conversation with a driver. The loop owns it exclusively and
/// asks for one decision at a time.
pub trait AgentTurnSession {
    /// The hash of the instructions and prompt the seat was given; read once,
    /// right after `open`, and annotated under `promptHash`.
    fn prompt_hash(&self) -> Option<String>;

    /// The next decision, as raw JSON for the loop to parse.
    ///
    /// # Errors
    /// When the driver cannot decide (the loop contains the error as
    /// `driver_failed`, or as a cancellation when the turn is stopping).
    fn next(&mut self, input: AgentTurnInput, signal: AbortSignal) -> LocalBoxFuture<'_, Result<Value, DriverError>>;

    /// Releases the session. `None` means the session has nothing to release.
    /// Called once by the loop; its errors and hangs never change the outcome.
    fn close(
        &mut self,
        outcome: SessionOutcome,
        signal: AbortSignal,
    ) -> Option<LocalBoxFuture<'_, Result<(), DriverError>>> {
        let _ = (outcome, signal);
        None
    }
}

/// A driver: opens one session per turn.
pub trait AgentTurnDriver {
    /// The identity the turn is filed under.
    fn manifest(&self) -> RuntimeManifest;

    /// Opens the turn's session. Whatever the seat is told must be hashed
    /// before it is sent, so the session's `prompt_hash` covers it.
    ///
    /// # Errors
    /// When the session cannot be opened.
    fn open(
        &self,
        request: Rc<RuntimeTurnRequest>,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn AgentTurnSession>, DriverError>>;
}

impl<T: AgentTurnDriver + ?Sized> AgentTurnDriver for Rc<T> {
    fn manifest(&self) -> RuntimeManifest {
        (**self).manifest()
    }

    fn open(
        &self,
        request: Rc<RuntimeTurnRequest>,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn AgentTurnSession>, DriverError>> {
        (**self).open(request, signal)
    }
}
