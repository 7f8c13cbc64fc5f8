//! Turns: what the host asks the envelope to run, what a runtime sees and
//! answers, and what the envelope returns.

use crate::access::{AccessContext, RuntimeVisibleContext};
use crate::address::Address;
use crate::capability::CapabilityRequest;
use crate::message::{MessageEnvelope, PROTOCOL_VERSION};
use crate::tool::{ProtocolError, ToolDefinition};
use crate::validate::{self, child, Validate, ValidationError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Largest `maxSteps` a request may ask for.
pub const MAX_STEPS: u32 = 1000;
/// Largest `maxToolCalls` a request may ask for.
pub const MAX_EXECUTION_TOOL_CALLS: u32 = 10_000;
/// Largest `timeoutMs` a request may ask for.
pub const MAX_EXECUTION_TIMEOUT_MS: u64 = 600_000;

/// Per-request limits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionOptions {
    /// Step budget (1..=1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// Tool-call budget (1..=10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
    /// Deadline in milliseconds (1..=600,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What the host passes to the envelope for one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionRequest {
    /// Protocol epoch.
    pub version: String,
    /// Record identity of the turn.
    pub execution_id: String,
    /// The executing agent.
    pub agent: Address,
    /// Trusted context.
    pub context: AccessContext,
    /// The delivered message.
    pub message: MessageEnvelope,
    /// Tools the host requests; the kernel's catalogue decides. Shared, so
    /// a host that requests one list every turn copies a reference to it.
    pub tools: Arc<[ToolDefinition]>,
    /// Opaque state, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Map<String, Value>>,
    /// Limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<ExecutionOptions>,
    /// Opaque, untrusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl Validate for ExecutionRequest {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        if self.version != PROTOCOL_VERSION {
            return Err(ValidationError::new(
                &child(p, "version"),
                format!("the protocol version \"{PROTOCOL_VERSION}\""),
            ));
        }
        validate::within(p, "executionId", |at| validate::identifier(&self.execution_id, at))?;
        validate::within(p, "context", |at| self.context.validate_at(at))?;
        validate::within(p, "message", |at| self.message.validate_at(at))?;
        validate::within(p, "tools", |tools| {
            validate::length(self.tools.len(), 0, 512, tools)?;
            for (i, tool) in self.tools.iter().enumerate() {
                validate::within_index(tools, i, |at| tool.validate_at(at))?;
            }
            Ok(())
        })?;
        if let Some(options) = &self.options {
            let at = child(p, "options");
            bounded_option(options.max_steps.map(u64::from), u64::from(MAX_STEPS), &child(&at, "maxSteps"))?;
            bounded_option(
                options.max_tool_calls.map(u64::from),
                u64::from(MAX_EXECUTION_TOOL_CALLS),
                &child(&at, "maxToolCalls"),
            )?;
            bounded_option(options.timeout_ms, MAX_EXECUTION_TIMEOUT_MS, &child(&at, "timeoutMs"))?;
        }
        Ok(())
    }
}

fn bounded_option(value: Option<u64>, max: u64, pointer: &str) -> Result<(), ValidationError> {
    match value {
        Some(v) if v == 0 || v > max => Err(ValidationError::new(pointer, format!("an integer from 1 to {max}"))),
        _ => Ok(()),
    }
}

/// A turn's resolved limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeLimits {
    /// Step budget.
    pub max_steps: u32,
    /// Tool-call budget.
    pub max_tool_calls: u32,
    /// Deadline in milliseconds.
    pub timeout_ms: u64,
}

/// A runtime's identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeManifest {
    /// Runtime id.
    pub id: String,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Protocol epoch.
    pub protocol_version: String,
    /// Runtime version.
    pub version: String,
}

impl Validate for RuntimeManifest {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::identifier(&self.id, &child(p, "id"))?;
        validate::identifier(&self.version, &child(p, "version"))?;
        if self.protocol_version != PROTOCOL_VERSION {
            return Err(ValidationError::new(
                &child(p, "protocolVersion"),
                format!("the protocol version \"{PROTOCOL_VERSION}\""),
            ));
        }
        Ok(())
    }
}

/// What a runtime is handed: the request with the context narrowed and the
/// tools replaced by the effective catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeTurnRequest {
    /// Protocol epoch.
    pub version: String,
    /// Record identity of the turn.
    pub execution_id: String,
    /// The executing agent.
    pub agent: Address,
    /// The narrowed context.
    pub context: RuntimeVisibleContext,
    /// The delivered message.
    pub message: MessageEnvelope,
    /// The effective catalogue, sharing the kernel listing's definitions.
    pub tools: Vec<Arc<ToolDefinition>>,
    /// Opaque state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Map<String, Value>>,
    /// The request's own options, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<ExecutionOptions>,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A runtime's own observation; recorded wrapped as `runtime.event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeEvent {
    /// Event type (an identifier).
    #[serde(rename = "type")]
    pub kind: String,
    /// Any JSON.
    pub data: Value,
}

/// How a runtime ends its turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum RuntimeTurnOutcome {
    /// Done, with an answer.
    Complete {
        /// The answer.
        output: Value,
        /// Facts for the result metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// Gave up.
    Fail {
        /// Why.
        error: ProtocolError,
        /// Facts for the result metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// Asks a human.
    Escalate {
        /// Why (1..=512 characters after trimming).
        reason: String,
        /// Facts for the result metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
}

impl RuntimeTurnOutcome {
    /// The outcome's own metadata.
    #[must_use]
    pub fn metadata(&self) -> Option<&Map<String, Value>> {
        match self {
            RuntimeTurnOutcome::Complete { metadata, .. }
            | RuntimeTurnOutcome::Fail { metadata, .. }
            | RuntimeTurnOutcome::Escalate { metadata, .. } => metadata.as_ref(),
        }
    }
}

impl Validate for RuntimeTurnOutcome {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        match self {
            RuntimeTurnOutcome::Complete { .. } => Ok(()),
            RuntimeTurnOutcome::Fail { error, .. } => error.validate_at(&child(p, "error")),
            RuntimeTurnOutcome::Escalate { reason, .. } => validate::bounded_text(reason, 512, &child(p, "reason")),
        }
    }
}

/// A turn's ending status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionStatus {
    /// The runtime completed.
    Succeeded,
    /// Context validation or admission refused the turn.
    Denied,
    /// The runtime failed, or the envelope ended the turn.
    Failed,
    /// Deadline, host cancellation or drain.
    Cancelled,
    /// The runtime asked a human, and the turn was granted the affordance.
    Escalated,
}

impl ExecutionStatus {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionStatus::Succeeded => "succeeded",
            ExecutionStatus::Denied => "denied",
            ExecutionStatus::Failed => "failed",
            ExecutionStatus::Cancelled => "cancelled",
            ExecutionStatus::Escalated => "escalated",
        }
    }
}

/// A recorded request for human review; always pending inside SharedOS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Escalation {
    /// Why.
    pub reason: String,
    /// When.
    pub requested_at: String,
    /// What authority would resolve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_authority: Option<CapabilityRequest>,
    /// Who is assumed to review (the context owner).
    pub reviewer: Address,
    /// Always `pending`.
    pub status: String,
}

/// One envelope event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutionEvent {
    /// Payload; never arguments, results or message payloads.
    pub data: Value,
    /// Derived event id.
    pub event_id: String,
    /// The turn's execution id.
    pub execution_id: String,
    /// Envelope clock.
    pub occurred_at: String,
    /// 0, 1, 2, ... without gaps.
    pub sequence: u64,
    /// The turn's trace.
    pub trace_id: String,
    /// Event type (see the envelope's vocabulary).
    #[serde(rename = "type")]
    pub kind: String,
    /// Protocol epoch.
    pub version: String,
}

/// What the envelope returns for a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[must_use]
pub struct ExecutionResult {
    /// Protocol epoch.
    pub version: String,
    /// The turn's execution id.
    pub execution_id: String,
    /// The turn's trace.
    pub trace_id: String,
    /// How it ended.
    pub status: ExecutionStatus,
    /// On `succeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present_value")]
    pub output: Option<Value>,
    /// On `denied`, `failed` and `cancelled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProtocolError>,
    /// On `escalated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
    /// Every event, in order; shared with the record assembled from it.
    pub events: Arc<[ExecutionEvent]>,
    /// Envelope clock at the start.
    pub started_at: String,
    /// Envelope clock at the end.
    pub completed_at: String,
    /// Provenance and annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl ExecutionResult {
    /// The error code, when there is an error.
    #[must_use]
    pub fn code(&self) -> Option<&str> {
        self.error.as_ref().map(|e| e.code.as_str())
    }
}

/// Reads a field that may be absent (`None`, by `#[serde(default)]`) or
/// hold any JSON value, `null` included: a runtime that answers `null`
/// answered, and its record must read back as it was written, or its
/// hash would change between the run and a bundle's verifier.
///
/// # Errors
/// As [`Value`]'s deserialisation.
pub fn present_value<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod present_value_tests {
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Answer {
        #[serde(default, deserialize_with = "super::present_value")]
        output: Option<Value>,
    }

    #[test]
    fn a_null_answer_reads_back_as_an_answer_and_a_missing_one_as_none() {
        let null: Answer = serde_json::from_str(r#"{"output":null}"#).unwrap_or(Answer { output: None });
        assert_eq!(null.output, Some(Value::Null));
        let missing: Answer = serde_json::from_str("{}").unwrap_or(Answer { output: Some(Value::Bool(true)) });
        assert_eq!(missing.output, None);
    }
}
