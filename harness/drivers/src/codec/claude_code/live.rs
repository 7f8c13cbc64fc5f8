//! Reading the stream `claude -p --output-format stream-json --verbose`
//! writes, one line at a time.

use super::protocol::{assistant_steps, is_sub_agent, read_result, retryable, synthetic_error, ResultEnding};
use crate::frame::{HarnessFrame, HarnessStep};
use crate::live::{
    CallEnding, CallOrigin, CallStatus, IgnoredKind, LineReading, LiveOutcome, LiveStep, LiveStreamReader,
};
use crate::wire::parse_line;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// Frame types that carry nothing for the turn.
const IRRELEVANT_FRAMES: [&str; 3] = ["system", "stream_event", "rate_limit_event"];

/// Reads one Claude Code stream; see the module docs of
/// [`crate::codec::claude_code`] for the rules.
#[derive(Debug, Clone, Default)]
pub struct ClaudeCodeLiveReader {
    /// The error code of the last synthetic assistant frame.
    synthetic_error: Option<String>,
    /// The last non-blank prose of the turn.
    last_text: Option<String>,
    /// Tool-use ids already reported.
    reported_calls: BTreeSet<String>,
    /// Set by the first `result`.
    terminal: Option<LiveOutcome>,
}

impl LiveStreamReader for ClaudeCodeLiveReader {
    fn read_line(&mut self, line_number: usize, line: &str) -> LineReading {
        let frame = match parse_line(line) {
            Ok(frame) => frame,
            Err(kind) => return ignored(kind),
        };
        if self.terminal.is_some() {
            return ignored(IgnoredKind::AfterTerminal);
        }
        if is_sub_agent(&frame) {
            return ignored(IgnoredKind::OtherSession);
        }
        match frame.get("type").and_then(Value::as_str) {
            Some("assistant") => self.read_assistant(line_number, &frame),
            Some("result") => self.read_result(line_number, &frame),
            Some("user") => read_tool_results(&frame),
            Some(kind) if IRRELEVANT_FRAMES.contains(&kind) => ignored(IgnoredKind::Irrelevant),
            _ => ignored(IgnoredKind::Unknown),
        }
    }

    fn outcome(&self) -> LiveOutcome {
        self.terminal.clone().unwrap_or(LiveOutcome::NoOutcome)
    }
}

impl ClaudeCodeLiveReader {
    /// An assistant frame of the turn: prose and observed calls, or the
    /// synthetic frame's error code.
    fn read_assistant(&mut self, line_number: usize, frame: &HarnessFrame) -> LineReading {
        if let Some(code) = synthetic_error(frame) {
            if let Some(code) = code {
                self.synthetic_error = Some(code.to_string());
            }
            return ignored(IgnoredKind::Irrelevant);
        }
        let Some(steps) = assistant_steps(frame) else { return ignored(IgnoredKind::Malformed) };
        let mut read = Vec::new();
        for step in steps {
            let origin = match &step {
                HarnessStep::Message { text } if text.trim().is_empty() => continue,
                HarnessStep::Message { text } => {
                    self.last_text = Some(text.clone());
                    None
                }
                HarnessStep::ToolCall { call_id, .. } => {
                    if !self.reported_calls.insert(call_id.clone()) {
                        continue;
                    }
                    Some(CallOrigin::RanByCli)
                }
                _ => None,
            };
            read.push(LiveStep::new(line_number, step, origin));
        }
        if read.is_empty() {
            return ignored(IgnoredKind::Irrelevant);
        }
        LineReading::steps(read)
    }

    /// The terminal `result`.
    fn read_result(&mut self, line_number: usize, frame: &HarnessFrame) -> LineReading {
        let Some(ending) = read_result(frame, self.synthetic_error.as_deref()) else {
            return ignored(IgnoredKind::Malformed);
        };
        let (step, outcome) = match ending {
            ResultEnding::Failed { code, message } => {
                let retryable = retryable(&code);
                let step = HarnessStep::failed(&code, &message, retryable);
                (step, LiveOutcome::Failed { code, message, retryable, line: line_number })
            }
            ResultEnding::Complete { text } => {
                let output = json!({ "text": text.or_else(|| self.last_text.clone()).unwrap_or_default() });
                let step = HarnessStep::Complete { output: Some(output.clone()), metadata: usage_metadata(frame) };
                (step, LiveOutcome::Complete { output, line: line_number })
            }
        };
        self.terminal = Some(outcome);
        LineReading::steps(vec![LiveStep::new(line_number, step, None)])
    }
}

/// A `user` frame: the CLI hands its model the results of its calls, each
/// a `tool_result` block; the frame is irrelevant when it holds none.
fn read_tool_results(frame: &HarnessFrame) -> LineReading {
    let blocks = frame.get("message").and_then(|message| message.get("content")).and_then(Value::as_array);
    let refused: BTreeSet<&str> = frame
        .get("tool_result_meta")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|meta| meta.get("non_execution_kind").is_some_and(|kind| !kind.is_null()))
        .filter_map(|meta| meta.get("id").and_then(Value::as_str))
        .collect();
    let ended: Vec<CallEnding> = blocks
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
        .filter_map(|block| {
            let call_id = block.get("tool_use_id").and_then(Value::as_str)?;
            Some(call_ending(call_id, block, refused.contains(call_id)))
        })
        .collect();
    if ended.is_empty() {
        return ignored(IgnoredKind::Irrelevant);
    }
    LineReading { ended, ..LineReading::default() }
}

/// What became of one call, from its `tool_result` block. The CLI writes
/// its own refusals in words of its own: `<tool_use_error>` around "No such
/// tool available" for a tool it does not offer, a permission it was not
/// granted (also marked in `tool_result_meta`), "timed out" for a tool it
/// stopped waiting for. Any other result, an error or not, is the tool's.
fn call_ending(call_id: &str, block: &Value, refused: bool) -> CallEnding {
    let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
    let text = match block.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            blocks.iter().filter_map(|block| block.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    };
    let status = if !is_error {
        CallStatus::Ran
    } else if text.contains("No such tool available") {
        CallStatus::UnknownTool
    } else if refused || text.contains("haven't granted") {
        CallStatus::RefusedByCli
    } else if text.starts_with("MCP server") && text.contains("timed out") {
        CallStatus::TimedOut
    } else {
        CallStatus::Ran
    };
    CallEnding { call_id: call_id.to_string(), status, error: is_error.then_some(text) }
}

/// `{usage}` when the frame carries a usage object.
fn usage_metadata(frame: &HarnessFrame) -> Option<Map<String, Value>> {
    let usage = frame.get("usage").filter(|usage| usage.is_object())?;
    let mut metadata = Map::new();
    metadata.insert("usage".into(), usage.clone());
    Some(metadata)
}

/// A line not used, and why.
fn ignored(kind: IgnoredKind) -> LineReading {
    LineReading::ignored(kind)
}
