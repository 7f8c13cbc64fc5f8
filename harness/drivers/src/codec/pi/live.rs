//! Reading a real `pi --mode rpc` stream for one prompted run.

use super::event::{joined_text, pi_meaning, PiMeaning};
use crate::frame::{HarnessFrame, HarnessStep};
use crate::live::{
    CallEnding, CallOrigin, CallStatus, IgnoredKind, LineReading, LiveOutcome, LiveStep, LiveStreamReader,
};
use crate::wire::parse_line;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// Reads Pi's stdout for one prompted run.
///
/// # Ending the turn
///
/// The run ends at an `agent_end` that does not retry:
///
/// - `willRetry: true` is not an ending (a retry follows):
///   [`IgnoredKind::Irrelevant`].
/// - `willRetry: false` ends it for good.
/// - No `willRetry` (builds before the flag, which emit a plain `agent_end`
///   per retry attempt) ends it provisionally: a following
///   `auto_retry_start`, or `auto_compaction_end{willRetry:true}`, reopens
///   the run, and the ending is then read again from a later `agent_end`.
///
/// The ending fails when the last assistant `message_end` stopped with
/// `error` (code `harness_failed`), `aborted` (`harness_turn_aborted`) or
/// `length` (`harness_turn_max_tokens`: Pi does not continue a reply cut
/// short by its token limit, so the turn's answer is cut), message: its
/// `errorMessage`, else a fixed sentence. Real Pi has no `error` event;
/// such a run ends with an ordinary `agent_end{willRetry:false}` and often
/// exit code 0.
/// When no assistant `message_end` was seen, the last assistant message in
/// `agent_end.messages` is consulted instead. Otherwise the run completes,
/// and the output is `{"text": ...}` holding the last assistant message that
/// had text (its text blocks joined with `\n`), or `""` when none had.
///
/// A `response{success:false}` (Pi refused a command, e.g. a line it could
/// not parse) ends the run with `harness_command_rejected`. SharedOS's
/// `error` event, never written by real Pi, is still read as `harness_failed`.
///
/// After the ending, `agent_settled` and `auto_retry_end` (Pi's own closing
/// of the same run) are [`IgnoredKind::Irrelevant`]; anything else is
/// [`IgnoredKind::AfterTerminal`].
///
/// # Steps
///
/// Pi runs its calls itself, so each is a `tool_call` step with origin
/// [`CallOrigin::RanByCli`], reported once per call id from whichever line
/// shows it first: the `toolCall` block of an assistant `message_end`, or
/// a `tool_execution_start` or `tool_execution_end` (so a stream cut after
/// the execution started, or one that lost the assistant message, still
/// shows the call; from an end alone the arguments are not known and are
/// `{}`). Later lines of a reported call, `tool_execution_update` and
/// `message_update` deltas are [`IgnoredKind::Irrelevant`]. Assistant text is a `message` step; the
/// ending is a `failed` step, or a `complete` step whose output is the
/// outcome's (on builds without `willRetry`, a retried attempt's provisional
/// ending still shows its step).
#[derive(Debug, Clone, Default)]
pub struct PiLiveReader {
    /// Call ids already reported.
    reported_calls: BTreeSet<String>,
    assistant_seen: bool,
    assistant_failure: Option<HarnessStep>,
    final_text: Option<String>,
    ending: Option<Ending>,
}

/// How the run ended so far.
#[derive(Debug, Clone)]
struct Ending {
    outcome: LiveOutcome,
    /// Written by a build without `willRetry`; a retry may still follow.
    provisional: bool,
}

impl PiLiveReader {
    fn read_frame(&mut self, line: usize, frame: &HarnessFrame) -> LineReading {
        if let Some(kind @ ("tool_execution_start" | "tool_execution_end")) = frame.get("type").and_then(Value::as_str)
        {
            return self.read_execution(line, frame, kind == "tool_execution_start");
        }
        match pi_meaning(frame) {
            PiMeaning::Assistant { steps, failure } => {
                self.assistant_seen = true;
                self.assistant_failure = failure;
                if let Some(text) = joined_text(&steps) {
                    self.final_text = Some(text);
                }
                let shown = steps.len();
                let steps: Vec<LiveStep> = steps
                    .into_iter()
                    .filter(|step| match step {
                        HarnessStep::ToolCall { call_id, .. } => self.reported_calls.insert(call_id.clone()),
                        _ => true,
                    })
                    .map(|step| observed(line, step))
                    .collect();
                // A message whose every call an execution line reported first.
                if steps.is_empty() && shown > 0 {
                    return ignored(IgnoredKind::Irrelevant);
                }
                LineReading::steps(steps)
            }
            PiMeaning::Failure(step) => self.end(line, step, false),
            PiMeaning::AgentEnd { will_retry: Some(true), .. } => ignored(IgnoredKind::Irrelevant),
            PiMeaning::AgentEnd { will_retry, failure } => {
                let failure = if self.assistant_seen { self.assistant_failure.clone() } else { failure };
                self.end(line, failure.unwrap_or_else(HarnessStep::bare_complete), will_retry.is_none())
            }
            PiMeaning::Irrelevant => ignored(IgnoredKind::Irrelevant),
            PiMeaning::Malformed => ignored(IgnoredKind::Malformed),
            PiMeaning::Unknown => ignored(IgnoredKind::Unknown),
        }
    }

    /// A `tool_execution_start` or `_end`: the call, unless a line already
    /// reported it, and from an end, what became of it.
    fn read_execution(&mut self, line: usize, frame: &HarnessFrame, started: bool) -> LineReading {
        let id = frame.get("toolCallId").and_then(Value::as_str).filter(|id| !id.is_empty());
        let tool = frame.get("toolName").and_then(Value::as_str).filter(|tool| !tool.is_empty());
        let (Some(id), Some(tool)) = (id, tool) else { return ignored(IgnoredKind::Malformed) };
        let arguments = match frame.get("args") {
            Some(Value::Object(arguments)) => arguments.clone(),
            None if !started => Map::new(),
            _ => return ignored(IgnoredKind::Malformed),
        };
        let mut reading = LineReading::default();
        if self.reported_calls.insert(id.to_string()) {
            let step = HarnessStep::ToolCall { call_id: id.to_string(), tool: tool.to_string(), arguments };
            reading.steps.push(observed(line, step));
        }
        if !started {
            reading.ended.push(execution_ending(id, frame));
        } else if reading.steps.is_empty() {
            return ignored(IgnoredKind::Irrelevant);
        }
        reading
    }

    /// A line after an ending: Pi's own closing events, a retry reopening a
    /// provisional ending, or a line that arrived too late.
    fn read_after_ending(&mut self, provisional: bool, frame: &HarnessFrame) -> LineReading {
        let kind = frame.get("type").and_then(Value::as_str).unwrap_or_default();
        let retries = frame.get("willRetry").and_then(Value::as_bool) == Some(true);
        match kind {
            "agent_settled" | "auto_retry_end" => ignored(IgnoredKind::Irrelevant),
            "auto_retry_start" if provisional => self.reopen(),
            "auto_compaction_end" if provisional && retries => self.reopen(),
            "auto_compaction_start" if provisional => ignored(IgnoredKind::Irrelevant),
            _ => ignored(IgnoredKind::AfterTerminal),
        }
    }

    fn reopen(&mut self) -> LineReading {
        self.ending = None;
        ignored(IgnoredKind::Irrelevant)
    }

    /// Ends the run; a completion carries the final answer in its step too.
    fn end(&mut self, line: usize, step: HarnessStep, provisional: bool) -> LineReading {
        let (step, outcome) = ending(line, step, self.final_text.as_deref());
        self.ending = Some(Ending { outcome, provisional });
        LineReading::steps(vec![LiveStep::new(line, step, None)])
    }
}

impl LiveStreamReader for PiLiveReader {
    fn read_line(&mut self, line_number: usize, line: &str) -> LineReading {
        let frame = match parse_line(line) {
            Ok(frame) => frame,
            Err(kind) => return ignored(kind),
        };
        match self.ending.as_ref().map(|ending| ending.provisional) {
            Some(provisional) => self.read_after_ending(provisional, &frame),
            None => self.read_frame(line_number, &frame),
        }
    }

    fn outcome(&self) -> LiveOutcome {
        self.ending.as_ref().map_or(LiveOutcome::NoOutcome, |ending| ending.outcome.clone())
    }
}

/// Calls on Pi's stream are ones Pi runs itself; prose has no origin. A
/// call through the published MCP adapter's proxy tool `mcp` is reported
/// as the tool it names, with the arguments it passes on.
fn observed(line: usize, step: HarnessStep) -> LiveStep {
    match step {
        HarnessStep::ToolCall { call_id, tool, arguments } => {
            let (tool, arguments) = unproxied(tool, arguments);
            LiveStep::new(line, HarnessStep::ToolCall { call_id, tool, arguments }, Some(CallOrigin::RanByCli))
        }
        step => LiveStep::new(line, step, None),
    }
}

/// The name of the proxy tool through which the published Pi MCP adapter
/// makes every call: `{"tool": <name>, "args": <object or its JSON text>}`.
const PROXY_TOOL: &str = "mcp";

/// The tool and arguments a proxy call stands for; any other call, or a
/// proxy call that names no tool (a search or a listing), as it is.
fn unproxied(tool: String, arguments: Map<String, Value>) -> (String, Map<String, Value>) {
    if tool != PROXY_TOOL {
        return (tool, arguments);
    }
    let Some(real) = arguments.get("tool").and_then(Value::as_str).filter(|name| !name.is_empty()) else {
        return (tool, arguments);
    };
    let passed = match arguments.get("args") {
        Some(Value::Object(passed)) => passed.clone(),
        Some(Value::String(text)) => serde_json::from_str::<Map<String, Value>>(text).unwrap_or_default(),
        _ => Map::new(),
    };
    (real.to_string(), passed)
}

/// What became of a call, from its `tool_execution_end`. Pi writes its own
/// refusals as error results in words of its own: `Tool <name> not found`
/// for a tool it does not have, `Validation failed for tool` for arguments
/// its schema check refused (the call never ran), and the adapter's
/// "timed out" for a tool it stopped waiting for and "aborted" for one the
/// run gave up. Any other result is the tool's.
fn execution_ending(call_id: &str, frame: &HarnessFrame) -> CallEnding {
    let is_error = frame.get("isError").and_then(Value::as_bool) == Some(true);
    let blocks = frame.get("result").and_then(|result| result.get("content")).and_then(Value::as_array);
    let text: Vec<&str> =
        blocks.into_iter().flatten().filter_map(|block| block.get("text").and_then(Value::as_str)).collect();
    let text = text.join("\n");
    let status = if !is_error {
        CallStatus::Ran
    } else if text.starts_with("Tool ") && text.ends_with(" not found") {
        CallStatus::UnknownTool
    } else if text.starts_with("Validation failed for tool") {
        CallStatus::RefusedByCli
    } else if text.contains("timed out") {
        CallStatus::TimedOut
    } else if text.contains("aborted") {
        CallStatus::Failed
    } else {
        CallStatus::Ran
    };
    CallEnding { call_id: call_id.to_string(), status, error: is_error.then_some(text) }
}

fn ignored(kind: IgnoredKind) -> LineReading {
    LineReading::ignored(kind)
}

/// The terminal step as reported, and the outcome it gives: a failure keeps
/// its code and message; a completion's output is `{"text": final_text}`.
fn ending(line: usize, step: HarnessStep, final_text: Option<&str>) -> (HarnessStep, LiveOutcome) {
    match step {
        HarnessStep::Failed { error } => {
            let outcome = LiveOutcome::failed(&error, line);
            (HarnessStep::Failed { error }, outcome)
        }
        HarnessStep::Complete { metadata, .. } => {
            let output = json!({"text": final_text.unwrap_or_default()});
            let outcome = LiveOutcome::Complete { output: output.clone(), line };
            (HarnessStep::Complete { output: Some(output), metadata }, outcome)
        }
        other => (other, LiveOutcome::NoOutcome),
    }
}
