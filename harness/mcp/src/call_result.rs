//! A tool result as a `tools/call` answer (D54). A refusal is always a tool
//! result the harness can read, never a JSON-RPC error, so its model sees
//! why and the attempt stays in the record.

use crate::catalog::{META_CODE, META_STATUS};
use crate::epoch::{EPOCH, META_PROTOCOL_VERSION};
use rmcp::model::CallToolResult;
use serde_json::{json, Map, Value};
use sharedos_model::tool::{ToolDefinition, ToolOutcome, ToolResult};

/// The `tools/call` answer of `result`; `published` is the tool as the
/// catalogue published it, when it did.
#[must_use]
pub fn to_call_tool_result(result: &ToolResult, published: Option<&ToolDefinition>) -> CallToolResult {
    let mut answer = Map::new();
    match &result.outcome {
        ToolOutcome::Succeeded { output } => {
            let text = match output {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            answer.insert("content".into(), json!([{ "type": "text", "text": text }]));
            if output.is_object() && published.is_some_and(|tool| tool.output_schema.is_some()) {
                answer.insert("structuredContent".into(), output.clone());
            }
            answer.insert("isError".into(), json!(false));
            answer.insert("_meta".into(), json!({ META_PROTOCOL_VERSION: EPOCH }));
        }
        ToolOutcome::Denied { error } | ToolOutcome::Failed { error } => {
            let status = result.status().as_str();
            let mut body = Map::new();
            body.insert("status".into(), json!(status));
            body.insert("code".into(), json!(error.code));
            body.insert("message".into(), json!(error.message));
            if let Some(retryable) = error.retryable {
                body.insert("retryable".into(), json!(retryable));
            }
            answer.insert("content".into(), json!([{ "type": "text", "text": Value::Object(body).to_string() }]));
            answer.insert("isError".into(), json!(true));
            answer.insert(
                "_meta".into(),
                json!({ META_STATUS: status, META_CODE: error.code, META_PROTOCOL_VERSION: EPOCH }),
            );
        }
    }
    // Every member above is one CallToolResult reads; the fallback is never
    // reached, and would still be an error result rather than a panic.
    serde_json::from_value(Value::Object(answer)).unwrap_or_else(|_| CallToolResult::error(Vec::new()))
}
