//! Pi codec: call blocks (D34), frames (D37), the live reader over captured
//! streams, and the facts the shared codec contract checks it against
//! ([`CODEC`]: the result frame, writer round trips (D38), tool descriptions
//! (D39)).

use crate::arbitrary;
use crate::codec_contract::{self, Codec};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use sharedos_drivers::codec::pi::{PiLiveReader, PiProtocol, PiWriter};
use sharedos_drivers::frame::HarnessStep;
use sharedos_drivers::live::{read_stream, LiveStreamReader};
use sharedos_drivers::protocol::{HarnessFrameWriter, HarnessProtocol};
use sharedos_drivers::vendor::Vendor;
use sharedos_testkit::json::object;

fn read(value: Value) -> Vec<HarnessStep> {
    PiProtocol.interpret(&object(value))
}

fn steps_json(steps: &[HarnessStep]) -> Value {
    serde_json::to_value(steps).unwrap()
}

fn assistant(content: Value, stop_reason: &str) -> Value {
    json!({"type": "message_end", "message": {"role": "assistant", "content": content, "stopReason": stop_reason}})
}

fn stream(name: &str) -> Value {
    let path = format!("{}/tests/streams/pi/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::to_value(read_stream(&mut PiLiveReader::default(), &text)).unwrap()
}

fn lines(frames: &[Value]) -> Value {
    let text: String = frames.iter().map(|frame| format!("{frame}\n")).collect();
    serde_json::to_value(read_stream(&mut PiLiveReader::default(), &text)).unwrap()
}

// ---- D34: call blocks ----------------------------------------------------

#[test]
fn d34_call_blocks_with_bad_arguments_or_empty_ids_are_dropped() {
    let steps = read(assistant(
        json!([
            {"type": "toolCall", "id": "tc1", "name": "files.read", "arguments": "{\"path\":[]}"},
            {"type": "toolCall", "id": "", "name": "files.read", "arguments": {}},
            {"type": "toolCall", "id": "tc3", "name": "", "arguments": {}},
            {"type": "toolCall", "id": "tc4", "name": "files.read", "arguments": [1]},
            {"type": "toolCall", "id": 5, "name": "files.read"},
            {"type": "toolCall", "id": "tc6", "name": "files.list"},
            {"type": "text", "text": "kept"},
        ]),
        "toolUse",
    ));
    assert_eq!(
        steps_json(&steps),
        json!([
            {"type": "tool_call", "callId": "tc6", "tool": "files.list", "arguments": {}},
            {"type": "message", "text": "kept"},
        ])
    );
}

#[test]
fn d34_an_element_that_is_not_a_block_voids_the_frame() {
    let content =
        json!([{"type": "text", "text": "lost"}, {"type": "toolCall", "id": "tc1", "name": "x"}, {"text": "?"}]);
    assert_eq!(read(assistant(content, "toolUse")), Vec::new());
    assert_eq!(read(assistant(json!([{"type": 3}]), "stop")), Vec::new());
    assert_eq!(read(assistant(json!("text"), "stop")), Vec::new());
}

// ---- D37: frames ---------------------------------------------------------

#[test]
fn d37_an_assistant_message_end_gives_prose_and_calls_in_block_order() {
    let steps = read(assistant(
        json!([
            {"type": "thinking", "thinking": "..."},
            {"type": "text", "text": "Checking."},
            {"type": "toolCall", "id": "tc1", "name": "files.read", "arguments": {"path": ["Work"]}},
            {"type": "text", "text": "And more."},
        ]),
        "toolUse",
    ));
    assert_eq!(
        steps_json(&steps),
        json!([
            {"type": "message", "text": "Checking."},
            {"type": "tool_call", "callId": "tc1", "tool": "files.read", "arguments": {"path": ["Work"]}},
            {"type": "message", "text": "And more."},
        ])
    );
    let no_stop =
        json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "x"}]}});
    assert_eq!(steps_json(&read(no_stop)), json!([{"type": "message", "text": "x"}]));
}

#[test]
fn d37_a_refused_command_gives_a_retryable_rejection() {
    let steps = read(json!({"type": "response", "command": "prompt", "success": false, "error": "Unknown command: x"}));
    assert_eq!(
        steps_json(&steps),
        json!([{"type": "failed", "error": {"code": "harness_command_rejected", "message": "Unknown command: x", "retryable": true}}])
    );
    let unnamed = read(json!({"type": "response", "success": false}));
    assert_eq!(
        unnamed,
        vec![HarnessStep::failed("harness_command_rejected", "Pi refused the requested command.", true)]
    );
    let named = read(json!({"type": "response", "command": "steer", "success": false, "error": ""}));
    assert_eq!(named, vec![HarnessStep::failed("harness_command_rejected", "Pi refused the steer command.", true)]);
    assert_eq!(read(json!({"type": "response", "command": "prompt", "success": true})), Vec::new());
    assert_eq!(read(json!({"type": "response", "success": "no"})), Vec::new());
}

#[test]
fn d37_an_error_event_gives_a_retryable_failure_with_its_message() {
    let steps = read(json!({"type": "error", "error": {"status": 500}, "message": "Provider went away"}));
    assert_eq!(steps, vec![HarnessStep::failed("harness_failed", "Provider went away", true)]);
    let bare = read(json!({"type": "error"}));
    assert_eq!(bare, vec![HarnessStep::failed("harness_failed", "The Pi harness reported an error.", true)]);
    assert_eq!(read(json!({"type": "error", "message": 5})), Vec::new());
}

#[test]
fn d37_agent_end_completes_unless_it_will_retry() {
    assert_eq!(read(json!({"type": "agent_end", "willRetry": false})), vec![HarnessStep::bare_complete()]);
    assert_eq!(read(json!({"type": "agent_end", "messages": []})), vec![HarnessStep::bare_complete()]);
    assert_eq!(read(json!({"type": "agent_end", "willRetry": true})), Vec::new());
    assert_eq!(read(json!({"type": "agent_end", "willRetry": "yes"})), Vec::new());
}

/// Departure 1: a provider failure is an assistant message that stopped with
/// `error`, then an ordinary `agent_end`; the `agent_end` carries it.
#[test]
fn d37_departure_agent_end_fails_when_its_last_assistant_message_failed() {
    let failed =
        json!({"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "401 invalid x-api-key"});
    let steps =
        read(json!({"type": "agent_end", "messages": [{"role": "user", "content": "hi"}, failed], "willRetry": false}));
    assert_eq!(steps, vec![HarnessStep::failed("harness_failed", "401 invalid x-api-key", true)]);
    let aborted = json!({"role": "assistant", "content": [], "stopReason": "aborted"});
    let steps = read(json!({"type": "agent_end", "messages": [aborted, {"role": "toolResult"}]}));
    assert_eq!(
        steps,
        vec![HarnessStep::failed("harness_turn_aborted", "The Pi run was aborted before it finished.", true)]
    );
    let retrying = read(json!({"type": "agent_end", "messages": [failed], "willRetry": true}));
    assert_eq!(retrying, Vec::new());
    let recovered =
        json!([failed, {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"}]);
    assert_eq!(read(json!({"type": "agent_end", "messages": recovered})), vec![HarnessStep::bare_complete()]);
    // The failed message itself gives only its content: one frame cannot end the run.
    let message = read(assistant(json!([{"type": "text", "text": "partial"}]), "error"));
    assert_eq!(steps_json(&message), json!([{"type": "message", "text": "partial"}]));
}

/// Departure 5: Pi does not continue a reply stopped on `length` (the API's
/// `max_tokens`), so the turn's answer is cut: the turn fails, whether the
/// `agent_end` is read alone or after the message.
#[test]
fn d37_departure_a_reply_cut_short_by_its_token_limit_fails_the_turn() {
    let cut = json!({"role": "assistant", "content": [{"type": "text", "text": "This answer was cut sh"}],
        "stopReason": "length"});
    let fixed = "The Pi model's reply was cut short by its token limit.";
    let steps = read(json!({"type": "agent_end", "messages": [{"role": "user", "content": "hi"}, cut]}));
    assert_eq!(steps, vec![HarnessStep::failed("harness_turn_max_tokens", fixed, false)]);
    let reading = lines(&[
        assistant(json!([{"type": "text", "text": "This answer was cut sh"}]), "length"),
        json!({"type": "agent_end", "messages": [cut]}),
    ]);
    assert_eq!(
        reading["outcome"],
        json!({"type": "failed", "code": "harness_turn_max_tokens", "message": fixed, "retryable": false, "line": 2})
    );
    let recovered = lines(&[
        assistant(json!([{"type": "text", "text": "partial"}]), "length"),
        assistant(json!([{"type": "text", "text": "whole"}]), "stop"),
        json!({"type": "agent_end"}),
    ]);
    assert_eq!(recovered["outcome"], json!({"type": "complete", "output": {"text": "whole"}, "line": 3}));
}

#[test]
fn d37_deltas_tool_executions_and_other_messages_give_nothing() {
    for value in [
        json!({"type": "message_update", "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t", "name": "n"}]},
            "assistantMessageEvent": {"type": "toolcall_end", "toolCall": {"type": "toolCall", "id": "t", "name": "n"}}}),
        json!({"type": "tool_execution_start", "toolCallId": "t", "toolName": "n", "args": {}}),
        json!({"type": "tool_execution_end", "toolCallId": "t", "toolName": "n", "result": {}, "isError": false}),
        json!({"type": "message_end", "message": {"role": "user", "content": [{"type": "text", "text": "q"}]}}),
        json!({"type": "message_end", "message": {"role": "toolResult", "toolCallId": "t", "content": [{"type": "text", "text": "r"}]}}),
        json!({"type": "agent_start"}),
        json!({"type": "agent_settled"}),
        json!({"type": "auto_retry_start", "attempt": 1}),
        json!({"role": "toolResult", "toolCallId": "t"}),
    ] {
        assert_eq!(read(value.clone()), Vec::new(), "{value}");
    }
}

// ---- D37, D38, D39: the shared codec contract ------------------------------

/// Pi in the shared codec contract (`codec_contract`): a completion drops its
/// output; tools are listed out of band in the `defineTool` shape; a result
/// is a `toolResult` message.
pub(crate) const CODEC: Codec = Codec {
    protocol: &PiProtocol,
    writer: &PiWriter,
    vendor: Vendor::Pi,
    protocol_id: "pi.rpc.jsonl",
    completion: |_output| HarnessStep::bare_complete(),
    written_frames,
    described_tool: |schema| json!({"name": "files.read", "label": "files.read", "description": "Reads a file.", "parameters": schema}),
    catalogue_out_of_band: true,
    result_frame: |call_id, tool, text, is_error| {
        json!({"role": "toolResult", "toolCallId": call_id, "toolName": tool,
            "content": [{"type": "text", "text": text}], "isError": is_error})
    },
};

/// Written frames have Pi's shapes.
fn written_frames() {
    assert_eq!(
        Value::Object(PiWriter.tool_call("tc1", "files.read", &Map::new())),
        json!({"type": "message_end", "message": {"role": "assistant",
            "content": [{"type": "toolCall", "id": "tc1", "name": "files.read", "arguments": {}}], "stopReason": "toolUse"}})
    );
    assert_eq!(Value::Object(PiWriter.message("Hi")), assistant(json!([{"type": "text", "text": "Hi"}]), "stop"));
    assert_eq!(Value::Object(PiWriter.complete(Some(&json!(1)))), json!({"type": "agent_end", "willRetry": false}));
}

// ---- Live reader over captured streams ------------------------------------

#[test]
fn d37_live_a_successful_run_reports_tool_calls_as_ran_by_the_cli() {
    assert_eq!(
        stream("success_tool_call.jsonl"),
        json!({
            "steps": [
                {"line": 8, "step": {"type": "message", "text": "Checking the folder."}},
                {"line": 8, "step": {"type": "tool_call", "callId": "toolu_01", "tool": "files.list",
                    "arguments": {"path": ["Work", "Public"]}}, "origin": "ran_by_cli", "status": "ran"},
                {"line": 16, "step": {"type": "message", "text": "Work/Public holds notes.md."}},
                {"line": 18, "step": {"type": "complete", "output": {"text": "Work/Public holds notes.md."}}},
            ],
            "outcome": {"type": "complete", "output": {"text": "Work/Public holds notes.md."}, "line": 18},
            "ignored": {"irrelevant": 15},
        })
    );
}

#[test]
fn d37_live_a_provider_error_fails_the_run_without_an_error_event() {
    let message =
        "401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";
    assert_eq!(
        stream("provider_error.jsonl"),
        json!({
            "steps": [{"line": 9, "step": {"type": "failed", "error": {"code": "harness_failed", "message": message, "retryable": true}}}],
            "outcome": {"type": "failed", "code": "harness_failed", "message": message, "retryable": true, "line": 9},
            "ignored": {"irrelevant": 7},
        })
    );
}

#[test]
fn d37_live_a_retrying_agent_end_is_not_terminal() {
    assert_eq!(
        stream("retry_then_success.jsonl"),
        json!({
            "steps": [
                {"line": 12, "step": {"type": "message", "text": "Work holds 3 files."}},
                {"line": 14, "step": {"type": "complete", "output": {"text": "Work holds 3 files."}}},
            ],
            "outcome": {"type": "complete", "output": {"text": "Work holds 3 files."}, "line": 14},
            "ignored": {"irrelevant": 13},
        })
    );
}

#[test]
fn d37_live_an_old_build_without_will_retry_is_reopened_by_its_retry() {
    assert_eq!(
        stream("old_build_without_will_retry.jsonl"),
        json!({
            "steps": [
                {"line": 5, "step": {"type": "failed", "error": {"code": "harness_failed", "message": "503 service unavailable", "retryable": true}}},
                {"line": 9, "step": {"type": "message", "text": "Recovered: the plan has three phases."}},
                {"line": 11, "step": {"type": "complete", "output": {"text": "Recovered: the plan has three phases."}}},
            ],
            "outcome": {"type": "complete", "output": {"text": "Recovered: the plan has three phases."}, "line": 11},
            "ignored": {"irrelevant": 8},
        })
    );
}

#[test]
fn d37_live_an_old_build_that_does_not_retry_stays_failed() {
    let reading = lines(&[
        assistant(json!([]), "aborted"),
        json!({"type": "agent_end", "messages": []}),
        json!({"type": "agent_start"}),
        json!({"type": "auto_compaction_start", "reason": "overflow"}),
    ]);
    assert_eq!(
        reading["outcome"],
        json!({"type": "failed", "code": "harness_turn_aborted", "message": "The Pi run was aborted before it finished.", "retryable": true, "line": 2})
    );
    assert_eq!(reading["ignored"], json!({"after_terminal": 1, "irrelevant": 1}));
    let compaction = lines(&[
        assistant(json!([]), "error"),
        json!({"type": "agent_end"}),
        json!({"type": "auto_compaction_end", "willRetry": true}),
        assistant(json!([{"type": "text", "text": "Compacted and done."}]), "stop"),
        json!({"type": "agent_end"}),
    ]);
    assert_eq!(
        compaction["outcome"],
        json!({"type": "complete", "output": {"text": "Compacted and done."}, "line": 5})
    );
}

#[test]
fn d37_live_a_refused_command_fails_the_run() {
    let message = "No API key found for provider anthropic";
    assert_eq!(
        stream("response_rejected.jsonl"),
        json!({
            "steps": [{"line": 2, "step": {"type": "failed", "error": {"code": "harness_command_rejected", "message": message, "retryable": true}}}],
            "outcome": {"type": "failed", "code": "harness_command_rejected", "message": message, "retryable": true, "line": 2},
            "ignored": {"irrelevant": 1, "after_terminal": 1},
        })
    );
}

#[test]
fn d37_live_delta_noise_is_counted_and_never_read_as_calls() {
    assert_eq!(
        stream("delta_noise.jsonl"),
        json!({
            "steps": [
                {"line": 16, "step": {"type": "message", "text": "Hello"}},
                {"line": 16, "step": {"type": "tool_call", "callId": "call_9", "tool": "files.read",
                    "arguments": {"path": ["Work"]}}, "origin": "ran_by_cli", "status": "ran"},
                {"line": 22, "step": {"type": "message", "text": "All read."}},
                {"line": 23, "step": {"type": "complete", "output": {"text": "All read."}}},
            ],
            "outcome": {"type": "complete", "output": {"text": "All read."}, "line": 23},
            "ignored": {"blank": 1, "not_json": 1, "not_object": 1, "irrelevant": 14, "unknown": 1, "malformed": 1},
        })
    );
}

#[test]
fn d37_live_agent_end_messages_are_consulted_when_no_message_end_was_seen() {
    let failed = json!({"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "quota exceeded"});
    let reading = lines(&[json!({"type": "agent_end", "messages": [failed], "willRetry": false})]);
    assert_eq!(
        reading["outcome"],
        json!({"type": "failed", "code": "harness_failed", "message": "quota exceeded", "retryable": true, "line": 1})
    );
    let recovered = lines(&[
        assistant(json!([{"type": "text", "text": "fine"}]), "stop"),
        json!({"type": "agent_end", "messages": [failed], "willRetry": false}),
    ]);
    assert_eq!(recovered["outcome"], json!({"type": "complete", "output": {"text": "fine"}, "line": 2}));
}

// ---- Properties -----------------------------------------------------------

const KEYS: &[&str] = &[
    "type",
    "message",
    "role",
    "content",
    "text",
    "id",
    "name",
    "arguments",
    "stopReason",
    "errorMessage",
    "willRetry",
    "messages",
    "success",
    "command",
    "error",
];
const WORDS: &[&str] = &[
    "message_end",
    "assistant",
    "toolCall",
    "text",
    "agent_end",
    "response",
    "error",
    "aborted",
    "stop",
    "auto_retry_start",
    "auto_compaction_end",
    "agent_settled",
    "message_update",
    "tc1",
];

fn json_value() -> impl Strategy<Value = Value> {
    arbitrary::worded_json(KEYS, WORDS)
}

fn argument_value() -> impl Strategy<Value = Value> {
    arbitrary::argument_value(true)
}

proptest! {
    #[test]
    fn d37_arbitrary_json_never_panics(values in prop::collection::vec(json_value(), 0..12)) {
        let mut reader = PiLiveReader::default();
        for (index, value) in values.iter().enumerate() {
            if let Value::Object(map) = value {
                let _ = PiProtocol.interpret(map);
            }
            let shaped = json!({"type": "message_end", "message": value});
            let _ = PiProtocol.interpret(&object(shaped.clone()));
            let _ = reader.read_line(index * 2 + 1, &value.to_string());
            let _ = reader.read_line(index * 2 + 2, &shaped.to_string());
        }
        let _ = reader.outcome();
    }

    #[test]
    fn d37_arbitrary_text_never_panics(text in any::<String>()) {
        let _ = read_stream(&mut PiLiveReader::default(), &text);
        let _ = read_stream(&mut PiLiveReader::default(), &format!("{text}\r\n{text}"));
    }

    #[test]
    fn d38_the_writer_round_trips_arbitrary_calls_prose_and_completions(
        call_id in any::<String>().prop_filter("non-empty", |id| !id.is_empty()),
        tool in any::<String>().prop_filter("non-empty", |tool| !tool.is_empty()),
        arguments in prop::collection::btree_map(any::<String>(), argument_value(), 0..5),
        text in any::<String>(),
        output in json_value(),
    ) {
        codec_contract::call_round_trips(&CODEC, call_id, tool, arguments.into_iter().collect())?;
        codec_contract::message_round_trips(&CODEC, text)?;
        codec_contract::completion_round_trips(&CODEC, &output)?;
    }
}

// ---- observed calls, once each ----------------------------------------------

fn call_lines(reading: &Value) -> Vec<(u64, String, Value)> {
    reading["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["step"]["type"] == "tool_call")
        .map(|s| {
            (
                s["line"].as_u64().unwrap(),
                s["step"]["callId"].as_str().unwrap().to_string(),
                s["step"]["arguments"].clone(),
            )
        })
        .collect()
}

fn execution(kind: &str, id: &str, args: Option<Value>) -> Value {
    let mut frame = json!({"type": kind, "toolCallId": id, "toolName": "files.read"});
    if let Some(args) = args {
        frame["args"] = args;
    }
    frame
}

#[test]
fn an_observed_call_is_reported_once_from_whichever_line_shows_it_first() {
    let path = json!({"path": ["Work"]});
    let call = json!([{"type": "toolCall", "id": "c1", "name": "files.read", "arguments": path}]);
    // The assistant message first: the executions add nothing.
    let reading = lines(&[
        assistant(call.clone(), "toolUse"),
        execution("tool_execution_start", "c1", Some(path.clone())),
        execution("tool_execution_end", "c1", None),
    ]);
    assert_eq!(call_lines(&reading), [(1, "c1".to_string(), path.clone())]);
    // The execution first: the message adds nothing.
    let reading = lines(&[execution("tool_execution_start", "c1", Some(path.clone())), assistant(call, "toolUse")]);
    assert_eq!(call_lines(&reading), [(1, "c1".to_string(), path.clone())]);
    assert_eq!(reading["ignored"]["irrelevant"], 1);
}

#[test]
fn an_observed_call_is_reported_when_the_stream_shows_only_its_start_or_only_its_end() {
    let path = json!({"path": ["Work"]});
    let started = lines(&[execution("tool_execution_start", "c1", Some(path.clone()))]);
    assert_eq!(call_lines(&started), [(1, "c1".to_string(), path)]);
    let ended = lines(&[execution("tool_execution_end", "c2", None)]);
    assert_eq!(call_lines(&ended), [(1, "c2".to_string(), json!({}))]);
    let nameless = lines(&[json!({"type": "tool_execution_start", "toolCallId": "c3"})]);
    assert_eq!((call_lines(&nameless).len(), &nameless["ignored"]["malformed"]), (0, &json!(1)));
}
