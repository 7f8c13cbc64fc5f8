//! The vendor adapter contract: a protocol reads frames and renders the
//! catalogue and tool results; a frame writer is its inverse, used only to
//! build recorded conversations.

use crate::frame::{HarnessFrame, HarnessStep};
use serde_json::{Map, Value};
use sharedos_model::tool::{ToolDefinition, ToolResult};
use std::sync::Arc;

/// One vendor's wire format as the eval driver speaks it.
pub trait HarnessProtocol {
    /// The protocol id, e.g. `openai.responses.function-calling`.
    fn id(&self) -> &'static str;

    /// The catalogue in the vendor's tool shape.
    fn describe_tools(&self, tools: &[Arc<ToolDefinition>]) -> Value;

    /// What one frame means. Never panics; an irrelevant or malformed frame
    /// yields no step.
    fn interpret(&self, frame: &HarnessFrame) -> Vec<HarnessStep>;

    /// The frame that hands a tool result back to the harness.
    fn encode_tool_result(&self, result: &ToolResult) -> HarnessFrame;
}

/// Writes frames a protocol reads back; the inverse of
/// [`HarnessProtocol::interpret`] for the step kinds a transcript holds.
pub trait HarnessFrameWriter {
    /// Must equal the reading protocol's id.
    fn protocol_id(&self) -> &'static str;

    /// A frame asking for one tool call.
    fn tool_call(&self, call_id: &str, tool: &str, arguments: &Map<String, Value>) -> HarnessFrame;

    /// A frame carrying assistant prose.
    fn message(&self, text: &str) -> HarnessFrame;

    /// A terminal frame; some vendors cannot carry the output and drop it.
    fn complete(&self, output: Option<&Value>) -> HarnessFrame;

    /// The vendor's own report that the turn failed, with `message`; the
    /// protocol reads it as a failed step under the vendor's code.
    fn failure(&self, message: &str) -> HarnessFrame;
}

/// One tool as vendors list it: its `name`, its `description`, and its
/// input schema under `schema_key`. A protocol adds its own members.
///
/// Built member by member: `json!` would push every schema through the
/// value serialiser, copying it key by key, for every tool of every turn.
#[must_use]
pub fn listed_tool(tool: &ToolDefinition, schema_key: &str) -> Map<String, Value> {
    let mut entry = Map::new();
    entry.insert("name".to_string(), Value::String(tool.name.clone()));
    entry.insert("description".to_string(), Value::String(tool.description.clone()));
    entry.insert(schema_key.to_string(), Value::Object(Map::clone(&tool.input_schema)));
    entry
}
