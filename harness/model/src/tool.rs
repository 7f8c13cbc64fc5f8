//! Tool definitions, calls and results.

use crate::capability::Requirement;
use crate::validate::{self, child, Validate, ValidationError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A JSON object shared by every copy of the tool definition that holds it.
/// Schemas and tool metadata are written once and only read after, while a
/// catalogue is copied into every request, listing and record; sharing makes
/// those copies (and comparisons of copies) cost a reference count.
pub type SharedObject = Arc<Map<String, Value>>;

/// Whether a tool may change anything. Catalogue metadata, never authority;
/// it decides `retryable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadWrite {
    /// Observes only.
    Read,
    /// May change state.
    Write,
}

/// Hints about a tool's effects.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolAnnotations {
    /// Observes only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// May destroy data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Repeating it has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
}

/// A tool as the kernel's registry defines it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolDefinition {
    /// Globally unique name in a resolved registry.
    pub name: String,
    /// What the tool does (1..=8192 characters).
    pub description: String,
    /// Tool namespace: the enablement gate.
    pub namespace: String,
    /// Where it comes from (`sharedos`, `native`, `mcp`); metadata only.
    pub source: String,
    /// Read or write.
    pub read_write: ReadWrite,
    /// JSON Schema of the arguments.
    pub input_schema: SharedObject,
    /// JSON Schema of the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<SharedObject>,
    /// The broadest requirement the tool may ever resolve.
    pub required_capability: Requirement,
    /// Effect hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Whether two listings hold equal definitions, in order; shared
/// definitions compare by address first.
#[must_use]
pub fn same_definitions(a: &[Arc<ToolDefinition>], b: &[Arc<ToolDefinition>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y) || x == y)
}

impl ToolDefinition {
    /// True when a repeat of this call cannot add an effect: a `read` tool or
    /// a write declared idempotent.
    #[must_use]
    pub fn is_repeatable(&self) -> bool {
        self.read_write == ReadWrite::Read || self.annotations.as_ref().and_then(|a| a.idempotent) == Some(true)
    }
}

impl Validate for ToolDefinition {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "name", |at| validate::identifier(&self.name, at))?;
        if self.description.is_empty() || !validate::at_most_chars(&self.description, 8192) {
            return Err(ValidationError::new(&child(p, "description"), "a description of 1..8192 characters"));
        }
        validate::within(p, "namespace", |at| validate::identifier(&self.namespace, at))?;
        validate::within(p, "source", |at| validate::identifier(&self.source, at))?;
        validate::within(p, "requiredCapability", |at| {
            validate::within(at, "resource", |at| self.required_capability.resource.validate_at(at))
        })?;
        if let Some(a) = &self.annotations {
            let at = child(p, "annotations");
            if self.read_write == ReadWrite::Read && a.destructive == Some(true) {
                return Err(ValidationError::new(&at, "a read tool that is not destructive"));
            }
            if self.read_write == ReadWrite::Write && a.read_only == Some(true) {
                return Err(ValidationError::new(&at, "a write tool that is not read-only"));
            }
        }
        Ok(())
    }
}

/// A runtime's request to run one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub tool: String,
    /// Arguments (a JSON object).
    pub arguments: Map<String, Value>,
    /// Must equal the context's trace.
    pub trace_id: String,
    /// When the runtime asked.
    pub requested_at: String,
}

impl Validate for ToolCall {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "id", |at| validate::identifier(&self.id, at))?;
        validate::within(p, "tool", |at| validate::identifier(&self.tool, at))?;
        validate::within(p, "traceId", |at| validate::identifier(&self.trace_id, at))?;
        validate::within(p, "requestedAt", |at| validate::timestamp(&self.requested_at, at))
    }
}

/// An error as SharedOS reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProtocolError {
    /// The reason code.
    pub code: String,
    /// Human-readable (1..=4096 characters).
    pub message: String,
    /// Whether the same request may be sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// Extra detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Map<String, Value>>,
}

impl ProtocolError {
    /// An error with no `retryable` statement.
    #[must_use]
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> ProtocolError {
        ProtocolError { code: code.into(), message: message.into(), retryable: None, details: None }
    }
}

impl Validate for ProtocolError {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "code", |at| validate::identifier(&self.code, at))?;
        if self.message.is_empty() || !validate::at_most_chars(&self.message, 4096) {
            return Err(ValidationError::new(&child(p, "message"), "a message of 1..4096 characters"));
        }
        Ok(())
    }
}

/// How a tool call ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ToolOutcome {
    /// The tool ran and answered.
    Succeeded {
        /// The tool's answer.
        output: Value,
    },
    /// Authorization refused; nothing ran.
    Denied {
        /// Why.
        error: ProtocolError,
    },
    /// Allowed (or not an authorization question) and something broke.
    Failed {
        /// Why.
        error: ProtocolError,
    },
}

/// The answer to one tool call.
///
/// serde cannot refuse unknown keys next to a flattened enum, so strict
/// parsing of untrusted input goes through [`ToolResult::from_value`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The call this answers.
    pub call_id: String,
    /// The tool that answered.
    pub tool: String,
    /// When it finished.
    pub completed_at: String,
    /// Free-form metadata: carried as given, never interpreted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Succeeded, denied or failed.
    #[serde(flatten)]
    pub outcome: ToolOutcome,
}

/// The three statuses of a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// Ran and answered.
    Succeeded,
    /// Refused before running.
    Denied,
    /// Broke.
    Failed,
}

impl ToolStatus {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Succeeded => "succeeded",
            ToolStatus::Denied => "denied",
            ToolStatus::Failed => "failed",
        }
    }
}

impl ToolResult {
    /// A refusal or failure answering `call`.
    #[must_use]
    pub fn refusal(call: &ToolCall, status: ToolStatus, code: &str, message: &str, completed_at: &str) -> ToolResult {
        let error = ProtocolError::new(code, message);
        let outcome = match status {
            ToolStatus::Failed => ToolOutcome::Failed { error },
            _ => ToolOutcome::Denied { error },
        };
        ToolResult {
            call_id: call.id.clone(),
            tool: call.tool.clone(),
            completed_at: completed_at.to_string(),
            metadata: None,
            outcome,
        }
    }

    /// The status.
    #[must_use]
    pub fn status(&self) -> ToolStatus {
        match self.outcome {
            ToolOutcome::Succeeded { .. } => ToolStatus::Succeeded,
            ToolOutcome::Denied { .. } => ToolStatus::Denied,
            ToolOutcome::Failed { .. } => ToolStatus::Failed,
        }
    }

    /// The error, when the call did not succeed.
    #[must_use]
    pub fn error(&self) -> Option<&ProtocolError> {
        match &self.outcome {
            ToolOutcome::Succeeded { .. } => None,
            ToolOutcome::Denied { error } | ToolOutcome::Failed { error } => Some(error),
        }
    }
}

impl ToolResult {
    /// Parses untrusted JSON strictly: unknown keys are refused and bounds checked.
    ///
    /// # Errors
    /// When the value is not a tool result.
    pub fn from_value(value: &Value) -> Result<ToolResult, ValidationError> {
        const KEYS: &[&str] = &["callId", "tool", "completedAt", "metadata", "status", "output", "error"];
        let map = value.as_object().ok_or_else(|| ValidationError::new("", "a JSON object"))?;
        if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(ValidationError::new(&child("", key), "no such key in a tool result"));
        }
        let result =
            ToolResult::deserialize(value).map_err(|e| ValidationError::new("", format!("a tool result ({e})")))?;
        let extra = match result.outcome {
            ToolOutcome::Succeeded { .. } => map.contains_key("error"),
            _ => map.contains_key("output"),
        };
        if extra {
            return Err(ValidationError::new("", "a tool result whose fields fit its status"));
        }
        result.validate()?;
        Ok(result)
    }
}

impl Validate for ToolResult {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "callId", |at| validate::identifier(&self.call_id, at))?;
        validate::within(p, "tool", |at| validate::identifier(&self.tool, at))?;
        validate::within(p, "completedAt", |at| validate::timestamp(&self.completed_at, at))?;
        match &self.outcome {
            ToolOutcome::Succeeded { .. } => Ok(()),
            ToolOutcome::Denied { error } | ToolOutcome::Failed { error } => {
                validate::within(p, "error", |at| error.validate_at(at))
            }
        }
    }
}
