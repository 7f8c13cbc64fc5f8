//! Pi: placeholder until the codec is written.

use crate::frame::{HarnessFrame, HarnessStep};
use crate::live::{LineReading, LiveOutcome, LiveStreamReader};
use crate::protocol::{HarnessFrameWriter, HarnessProtocol};
use serde_json::{Map, Value};
use sharedos_model::tool::{ToolDefinition, ToolResult};

/// The Pi protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiProtocol;

impl HarnessProtocol for PiProtocol {
    fn id(&self) -> &'static str {
        "unset"
    }
    fn describe_tools(&self, _tools: &[ToolDefinition]) -> Value {
        Value::Array(Vec::new())
    }
    fn interpret(&self, _frame: &HarnessFrame) -> Vec<HarnessStep> {
        Vec::new()
    }
    fn encode_tool_result(&self, _result: &ToolResult) -> HarnessFrame {
        Map::new()
    }
}

/// The Pi frame writer.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiWriter;

impl HarnessFrameWriter for PiWriter {
    fn protocol_id(&self) -> &'static str {
        "unset"
    }
    fn tool_call(&self, _call_id: &str, _tool: &str, _arguments: &Map<String, Value>) -> HarnessFrame {
        Map::new()
    }
    fn message(&self, _text: &str) -> HarnessFrame {
        Map::new()
    }
    fn complete(&self, _output: Option<&Value>) -> HarnessFrame {
        Map::new()
    }
}

/// Reads the Pi CLI's real stream.
#[derive(Debug, Clone, Default)]
pub struct PiLiveReader;

impl LiveStreamReader for PiLiveReader {
    fn read_line(&mut self, _line_number: usize, _line: &str) -> LineReading {
        LineReading::default()
    }
    fn outcome(&self) -> LiveOutcome {
        LiveOutcome::NoOutcome
    }
}
