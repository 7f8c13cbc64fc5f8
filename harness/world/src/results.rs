//! Building the results fixture tools answer with.

use serde_json::Value;
use sharedos_model::tool::{ProtocolError, ToolOutcome, ToolResult};

use sharedos_kernel::ports::ParsedCall;

/// A succeeded result for `call`, completed at `now`.
#[must_use]
pub fn succeeded(call: &ParsedCall, output: Value, now: &str) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        tool: call.tool.clone(),
        completed_at: now.to_string(),
        metadata: None,
        outcome: ToolOutcome::Succeeded { output },
    }
}

/// A failed result for `call` with a store's code, completed at `now`.
#[must_use]
pub fn failed(call: &ParsedCall, code: &str, message: &str, now: &str) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        tool: call.tool.clone(),
        completed_at: now.to_string(),
        metadata: None,
        outcome: ToolOutcome::Failed { error: ProtocolError::new(code, message) },
    }
}
