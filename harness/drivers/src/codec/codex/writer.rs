//! The Codex frame writer: Responses-shape frames for recorded
//! conversations, read back by [`super::CodexProtocol`].

use super::PROTOCOL_ID;
use crate::frame::HarnessFrame;
use crate::protocol::HarnessFrameWriter;
use serde_json::{json, Map, Value};

/// Writes Codex frames in the Responses shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexWriter;

impl HarnessFrameWriter for CodexWriter {
    fn protocol_id(&self) -> &'static str {
        PROTOCOL_ID
    }

    /// The arguments travel as JSON text: the reader refuses an object there,
    /// as the Responses API does.
    fn tool_call(&self, call_id: &str, tool: &str, arguments: &Map<String, Value>) -> HarnessFrame {
        let mut frame = Map::new();
        frame.insert("type".into(), json!("function_call"));
        frame.insert("call_id".into(), Value::String(call_id.to_string()));
        frame.insert("name".into(), Value::String(tool.to_string()));
        frame.insert("arguments".into(), Value::String(Value::Object(arguments.clone()).to_string()));
        frame
    }

    fn message(&self, text: &str) -> HarnessFrame {
        let mut frame = Map::new();
        frame.insert("type".into(), json!("message"));
        frame.insert("content".into(), json!([{ "type": "output_text", "text": text }]));
        frame
    }

    /// The output travels as the JSON text of `output_text`, so it is read
    /// back as `{text: <that JSON text>}`.
    fn complete(&self, output: Option<&Value>) -> HarnessFrame {
        let mut response = Map::new();
        if let Some(output) = output {
            response.insert("output_text".into(), Value::String(output.to_string()));
        }
        let mut frame = Map::new();
        frame.insert("type".into(), json!("response.completed"));
        frame.insert("response".into(), Value::Object(response));
        frame
    }

    /// `turn.failed`, the exec stream's failed turn.
    fn failure(&self, message: &str) -> HarnessFrame {
        let mut frame = Map::new();
        frame.insert("type".into(), json!("turn.failed"));
        frame.insert("error".into(), json!({ "message": message }));
        frame
    }
}
