//! The frame model: what a vendor's frame means once interpreted, and what a
//! transport is handed when a turn opens.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sharedos_model::access::RuntimeVisibleContext;
use sharedos_model::tool::ProtocolError;
use std::sync::Arc;

/// One JSON object in the vendor's own shape.
pub type HarnessFrame = Map<String, Value>;

/// What one frame means. A frame yields zero or more steps, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HarnessStep {
    /// The harness asks for a tool call.
    ToolCall {
        /// The vendor's call id.
        #[serde(rename = "callId")]
        call_id: String,
        /// The tool name, passed through untouched.
        tool: String,
        /// The arguments, always a JSON object.
        arguments: Map<String, Value>,
    },
    /// Assistant prose; kept so a terminal frame without text still has output.
    Message {
        /// The prose.
        text: String,
    },
    /// The harness finished the turn.
    Complete {
        /// The output, when the terminal frame carries one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
        /// Metadata, when the terminal frame carries some.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// The harness reported a failure of the turn.
    Failed {
        /// The failure as SharedOS reports it.
        error: ProtocolError,
    },
}

impl HarnessStep {
    /// A `complete` step with no output and no metadata.
    #[must_use]
    pub fn bare_complete() -> HarnessStep {
        HarnessStep::Complete { output: None, metadata: None }
    }

    /// A `failed` step with an explicit `retryable`.
    #[must_use]
    pub fn failed(code: &str, message: &str, retryable: bool) -> HarnessStep {
        let mut error = ProtocolError::new(code, message);
        if retryable {
            error.retryable = Some(true);
        }
        HarnessStep::Failed { error }
    }
}

/// What a transport receives when a turn opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HarnessTurnRequest {
    /// The turn's execution id.
    pub execution_id: String,
    /// The prompt the seat composed.
    pub prompt: String,
    /// The instructions, when there are any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The permission-filtered catalogue, already rendered by the protocol;
    /// shared, since turns over one catalogue render it alike.
    pub tools: Arc<Value>,
    /// The sanitised context.
    pub context: RuntimeVisibleContext,
    /// The request's metadata, when it has some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}
