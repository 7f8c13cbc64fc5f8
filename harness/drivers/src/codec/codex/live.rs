//! Reading the stream `codex exec --json` writes, one line at a time.

use super::protocol::{agent_message_text, item_kind, turn_failed_message, HARNESS_FAILED, TURN_FAILED_MESSAGE};
use crate::frame::{HarnessFrame, HarnessStep};
use crate::live::{
    CallEnding, CallOrigin, CallStatus, IgnoredKind, LineReading, LiveOutcome, LiveStep, LiveStreamReader,
};
use crate::wire::{non_empty, parse_line, parse_tool_arguments};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// Item kinds that carry nothing for the turn's outcome or its calls.
const IRRELEVANT_ITEMS: [&str; 5] = ["reasoning", "todo_list", "plan", "collab_tool_call", "error"];

/// Top-level line types that carry nothing for the turn.
const IRRELEVANT_LINES: [&str; 5] =
    ["thread.started", "turn.started", "item.updated", "item.plan.delta", "request_user_input"];

/// Reads one `codex exec --json` stream; see the module docs of
/// [`crate::codec::codex`] for the rules.
#[derive(Debug, Clone, Default)]
pub struct CodexLiveReader {
    /// The text of the last non-blank agent message: the answer.
    last_agent_message: Option<String>,
    /// The message of the last top-level `error` notice.
    last_error: Option<String>,
    /// Item ids whose call was already reported.
    reported_items: BTreeSet<String>,
    /// Set by `turn.completed` or `turn.failed`.
    terminal: Option<LiveOutcome>,
}

impl LiveStreamReader for CodexLiveReader {
    fn read_line(&mut self, line_number: usize, line: &str) -> LineReading {
        let frame = match parse_line(line) {
            Ok(frame) => frame,
            Err(kind) => return ignored(kind),
        };
        if self.terminal.is_some() {
            return ignored(IgnoredKind::AfterTerminal);
        }
        match frame.get("type").and_then(Value::as_str) {
            Some("item.started") => self.read_item(line_number, &frame, false),
            Some("item.completed") => self.read_item(line_number, &frame, true),
            Some("turn.completed") => self.complete(line_number, &frame),
            Some("turn.failed") => self.fail(line_number, &frame),
            Some("error") => self.remember_error(&frame),
            Some(kind) if IRRELEVANT_LINES.contains(&kind) => ignored(IgnoredKind::Irrelevant),
            _ => ignored(IgnoredKind::Unknown),
        }
    }

    fn outcome(&self) -> LiveOutcome {
        self.terminal.clone().unwrap_or(LiveOutcome::NoOutcome)
    }
}

impl CodexLiveReader {
    /// An `item.started` or `item.completed` line.
    fn read_item(&mut self, line_number: usize, frame: &HarnessFrame, completed: bool) -> LineReading {
        let Some(item) = frame.get("item").and_then(Value::as_object) else {
            return ignored(IgnoredKind::Malformed);
        };
        let Some(kind) = item_kind(item) else { return ignored(IgnoredKind::Malformed) };
        match kind {
            "agent_message" if completed => self.read_agent_message(line_number, item),
            "agent_message" => ignored(IgnoredKind::Irrelevant),
            "mcp_tool_call" | "command_execution" | "file_change" | "web_search" => {
                self.read_call(line_number, item, completed)
            }
            _ if IRRELEVANT_ITEMS.contains(&kind) => ignored(IgnoredKind::Irrelevant),
            _ => ignored(IgnoredKind::Unknown),
        }
    }

    /// A completed agent message: prose, and the answer so far.
    fn read_agent_message(&mut self, line_number: usize, item: &Map<String, Value>) -> LineReading {
        let Some(text) = agent_message_text(item) else { return ignored(IgnoredKind::Malformed) };
        if text.trim().is_empty() {
            return ignored(IgnoredKind::Irrelevant);
        }
        self.last_agent_message = Some(text.to_string());
        stepped(line_number, HarnessStep::Message { text: text.to_string() }, None)
    }

    /// A call the CLI runs itself, reported once per item id, and its
    /// ending, from the completed item.
    fn read_call(&mut self, line_number: usize, item: &Map<String, Value>, completed: bool) -> LineReading {
        let id = non_empty(item, "id");
        let reported = id.is_some_and(|id| self.reported_items.contains(id));
        if id.is_none() && !completed {
            return ignored(IgnoredKind::Irrelevant);
        }
        let call_id = match id {
            Some(id) => id.to_string(),
            None => format!("line_{line_number}"),
        };
        let mut reading = LineReading::default();
        if !reported {
            let Some((tool, arguments)) = observed_call(item) else { return ignored(IgnoredKind::Malformed) };
            self.reported_items.insert(call_id.clone());
            let step = HarnessStep::ToolCall { call_id: call_id.clone(), tool, arguments };
            reading.steps.push(LiveStep::new(line_number, step, Some(CallOrigin::RanByCli)));
        }
        if completed {
            let (status, error) = call_status(item);
            reading.ended.push(CallEnding { call_id, status, error });
        } else if reported {
            return ignored(IgnoredKind::Irrelevant);
        }
        reading
    }

    /// `turn.completed`: the answer is the last agent message.
    fn complete(&mut self, line_number: usize, frame: &HarnessFrame) -> LineReading {
        let output = json!({ "text": self.last_agent_message.clone().unwrap_or_default() });
        let metadata = frame.get("usage").filter(|usage| usage.is_object()).map(|usage| {
            let mut metadata = Map::new();
            metadata.insert("usage".into(), usage.clone());
            metadata
        });
        self.terminal = Some(LiveOutcome::Complete { output: output.clone(), line: line_number });
        stepped(line_number, HarnessStep::Complete { output: Some(output), metadata }, None)
    }

    /// `turn.failed`: its own message, else the last notice, else a fixed
    /// sentence.
    fn fail(&mut self, line_number: usize, frame: &HarnessFrame) -> LineReading {
        let message = turn_failed_message(frame)
            .map(str::to_string)
            .or_else(|| self.last_error.clone())
            .unwrap_or_else(|| TURN_FAILED_MESSAGE.to_string());
        self.terminal = Some(LiveOutcome::Failed {
            code: HARNESS_FAILED.to_string(),
            message: message.clone(),
            retryable: true,
            line: line_number,
        });
        stepped(line_number, HarnessStep::failed(HARNESS_FAILED, &message, true), None)
    }

    /// A top-level `error` notice: not terminal, kept as context.
    fn remember_error(&mut self, frame: &HarnessFrame) -> LineReading {
        match frame.get("message").and_then(Value::as_str) {
            Some(message) => {
                if !message.trim().is_empty() {
                    self.last_error = Some(message.to_string());
                }
                ignored(IgnoredKind::Irrelevant)
            }
            None => ignored(IgnoredKind::Malformed),
        }
    }
}

/// The tool and arguments of an `mcp_tool_call`, or of a call of Codex's
/// own tools: a `command_execution`, a `file_change` (a patch it applied),
/// a `web_search`; `None` when the item lacks what names the call.
fn observed_call(item: &Map<String, Value>) -> Option<(String, Map<String, Value>)> {
    if let Some(kind @ ("file_change" | "web_search")) = item_kind(item) {
        let key = if kind == "file_change" { "changes" } else { "query" };
        let mut arguments = Map::new();
        arguments.extend(item.get(key).map(|value| (key.to_string(), value.clone())));
        return Some((kind.to_string(), arguments));
    }
    if item_kind(item) == Some("command_execution") {
        let command = item.get("command").filter(|command| command.is_string() || command.is_array())?;
        let mut arguments = Map::new();
        arguments.insert("command".into(), command.clone());
        return Some(("command_execution".to_string(), arguments));
    }
    let tool = non_empty(item, "tool")?;
    let arguments = match item.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(Value::String(raw)) => parse_tool_arguments(raw)?,
        Some(_) => return None,
    };
    Some((tool.to_string(), arguments))
}

/// What became of a completed call item. An MCP call whose `result` is
/// there reached its tool, even with `status: "failed"` (the tool answered
/// an error); one with only an `error` never got an answer, and the
/// error's words say why. A command, patch or search of Codex's own ran
/// unless Codex declined it.
fn call_status(item: &Map<String, Value>) -> (CallStatus, Option<String>) {
    let status = item.get("status").and_then(Value::as_str).unwrap_or_default();
    let error = item.get("error").and_then(|error| error.get("message")).and_then(Value::as_str);
    if matches!(item_kind(item), Some("command_execution" | "file_change" | "web_search")) {
        let status = if status == "declined" { CallStatus::RefusedByCli } else { CallStatus::Ran };
        return (status, None);
    }
    let answered = item.get("result").is_some_and(|result| !result.is_null());
    if answered || (status == "completed" && error.is_none()) {
        let refusal = (status == "failed").then(|| item.get("result").and_then(result_text)).flatten();
        return (CallStatus::Ran, refusal);
    }
    let text = error.unwrap_or_default();
    let status = if text.contains("timed out") {
        CallStatus::TimedOut
    } else if text.contains("approval") || text.contains("rejected") || text.contains("cancelled") {
        CallStatus::RefusedByCli
    } else {
        CallStatus::Failed
    };
    (status, error.map(str::to_string))
}

/// The text blocks of an MCP result, joined.
fn result_text(result: &Value) -> Option<String> {
    let blocks = result.get("content")?.as_array()?;
    let texts: Vec<&str> = blocks.iter().filter_map(|block| block.get("text").and_then(Value::as_str)).collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// A line not used, and why.
fn ignored(kind: IgnoredKind) -> LineReading {
    LineReading::ignored(kind)
}

/// A line that gave one step.
fn stepped(line: usize, step: HarnessStep, origin: Option<CallOrigin>) -> LineReading {
    LineReading::steps(vec![LiveStep::new(line, step, origin)])
}
