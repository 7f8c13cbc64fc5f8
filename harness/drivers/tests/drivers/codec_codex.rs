//! The Codex codec: the Responses shape (D29–D31; D32, D38 and D39 through
//! the shared codec contract, whose Codex facts are [`CODEC`]), the CLI event
//! shape as `interpret` reads it, and the live reader over captured-shape
//! streams (`tests/streams/codex`). Tests of a departure from SharedOS's
//! reading say so in their name.

use crate::arbitrary;
use crate::codec_contract::{self, Codec};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use sharedos_drivers::codec::codex::{CodexLiveReader, CodexProtocol, CodexWriter};
use sharedos_drivers::frame::{HarnessFrame, HarnessStep};
use sharedos_drivers::live::{read_stream, IgnoredKind, LiveOutcome, LiveStep, LiveStreamReader, StreamReading};
use sharedos_drivers::protocol::{HarnessFrameWriter, HarnessProtocol};
use sharedos_drivers::vendor::Vendor;
use sharedos_testkit::json::object;
use std::collections::BTreeMap;

fn interpret(value: Value) -> Vec<HarnessStep> {
    CodexProtocol.interpret(&object(value))
}

fn call(call_id: &str, tool: &str, arguments: Value) -> HarnessStep {
    HarnessStep::ToolCall { call_id: call_id.into(), tool: tool.into(), arguments: object(arguments) }
}

fn message(text: &str) -> HarnessStep {
    HarnessStep::Message { text: text.into() }
}

fn failed(code: &str, message: &str, retryable: bool) -> HarnessStep {
    HarnessStep::failed(code, message, retryable)
}

// ---------------------------------------------------------------- D29

#[test]
fn d29_function_call_with_object_arguments_is_one_tool_call() {
    let steps = interpret(json!({
        "type": "function_call", "call_id": "call_01", "name": "files.read",
        "arguments": "{\"path\":[\"Work\",\"Public\"]}",
    }));
    assert_eq!(steps, vec![call("call_01", "files.read", json!({"path": ["Work", "Public"]}))]);
}

#[test]
fn d29_empty_or_whitespace_arguments_mean_an_empty_object() {
    for raw in ["", "   ", "\n\t"] {
        let steps = interpret(json!({"type": "function_call", "call_id": "c", "name": "t", "arguments": raw}));
        assert_eq!(steps, vec![call("c", "t", json!({}))], "arguments {raw:?}");
    }
}

#[test]
fn d29_non_object_arguments_fail_as_unparseable_and_not_retryable() {
    for raw in ["[1,2]", "null", "3", "\"text\"", "{not json", "true"] {
        let steps = interpret(json!({"type": "function_call", "call_id": "c", "name": "t", "arguments": raw}));
        assert_eq!(
            steps,
            vec![failed(
                "harness_arguments_unparseable",
                "Codex sent tool arguments that are not a JSON object.",
                false
            )],
            "arguments {raw:?}"
        );
    }
}

#[test]
fn d29_object_valued_arguments_yield_no_step() {
    let steps = interpret(json!({"type": "function_call", "call_id": "c", "name": "t", "arguments": {"a": 1}}));
    assert_eq!(steps, vec![]);
}

#[test]
fn d29_a_call_without_a_call_id_or_name_yields_no_step() {
    assert_eq!(interpret(json!({"type": "function_call", "call_id": "", "name": "t", "arguments": "{}"})), vec![]);
    assert_eq!(interpret(json!({"type": "function_call", "call_id": "c", "name": "", "arguments": "{}"})), vec![]);
    assert_eq!(interpret(json!({"type": "function_call", "name": "t", "arguments": "{}"})), vec![]);
}

// ---------------------------------------------------------------- D30

#[test]
fn d30_response_failed_is_retryable_with_the_vendor_code_and_message() {
    let steps = interpret(json!({
        "type": "response.failed", "error": {"code": "rate_limit_exceeded", "message": "Slow down"},
    }));
    assert_eq!(steps, vec![failed("rate_limit_exceeded", "Slow down", true)]);
}

#[test]
fn d30_response_failed_falls_back_to_harness_failed_the_top_message_then_a_sentence() {
    let steps = interpret(json!({"type": "response.failed", "message": "upstream gone"}));
    assert_eq!(steps, vec![failed("harness_failed", "upstream gone", true)]);
    let steps = interpret(json!({"type": "response.failed"}));
    assert_eq!(steps, vec![failed("harness_failed", "The Codex harness reported a failure.", true)]);
}

#[test]
fn d30_response_failed_with_mistyped_fields_yields_no_step() {
    assert_eq!(interpret(json!({"type": "response.failed", "message": 7})), vec![]);
    assert_eq!(interpret(json!({"type": "response.failed", "error": "boom"})), vec![]);
    assert_eq!(interpret(json!({"type": "response.failed", "error": {"code": 5}})), vec![]);
}

#[test]
fn d30_departure_a_blank_vendor_code_reports_harness_failed() {
    let steps = interpret(json!({"type": "response.failed", "error": {"code": " ", "message": ""}, "message": "m"}));
    assert_eq!(steps, vec![failed("harness_failed", "m", true)]);
}

#[test]
fn d30_turn_failed_is_a_retryable_harness_failed_with_the_cli_message() {
    let steps = interpret(json!({"type": "turn.failed", "error": {"message": "stream disconnected"}}));
    assert_eq!(steps, vec![failed("harness_failed", "stream disconnected", true)]);
    for blank in [json!({"type": "turn.failed"}), json!({"type": "turn.failed", "error": {"message": "  "}})] {
        assert_eq!(interpret(blank), vec![failed("harness_failed", "The Codex CLI reported a failed turn.", true)]);
    }
}

#[test]
fn d30_departure_a_top_level_error_line_is_not_a_failure() {
    // The CLI writes this shape for retry notices in runs that then succeed.
    assert_eq!(interpret(json!({"type": "error", "message": "Reconnecting... 2/5 (stream disconnected)"})), vec![]);
    assert_eq!(interpret(json!({"type": "error", "message": "401 Unauthorized"})), vec![]);
    assert_eq!(interpret(json!({"type": "error", "error": {"code": "x", "message": "y"}})), vec![]);
}

// ---------------------------------------------------------------- D31

#[test]
fn d31_response_completed_with_output_text_completes_with_text() {
    let steps = interpret(json!({"type": "response.completed", "response": {"output_text": "done"}}));
    assert_eq!(steps, vec![HarnessStep::Complete { output: Some(json!({"text": "done"})), metadata: None }]);
}

#[test]
fn d31_response_completed_without_output_text_is_a_bare_complete() {
    assert_eq!(interpret(json!({"type": "response.completed", "response": {}})), vec![HarnessStep::bare_complete()]);
    assert_eq!(interpret(json!({"type": "response.completed"})), vec![HarnessStep::bare_complete()]);
    assert_eq!(interpret(json!({"type": "response.completed", "response": {"output_text": 3}})), vec![]);
}

#[test]
fn d31_a_responses_message_gives_one_step_per_output_text_block() {
    let steps = interpret(json!({"type": "message", "content": [
        {"type": "output_text", "text": "one"},
        {"type": "refusal", "refusal": "no"},
        {"type": "output_text", "text": ""},
    ]}));
    assert_eq!(steps, vec![message("one"), message("")]);
    let voided = interpret(json!({"type": "message", "content": [{"type": "output_text", "text": "x"}, 3]}));
    assert_eq!(voided, vec![]);
}

#[test]
fn d31_a_completed_agent_message_is_prose_unless_blank() {
    let item =
        |text: &str| json!({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": text}});
    assert_eq!(interpret(item("I could not read that file.")), vec![message("I could not read that file.")]);
    assert_eq!(interpret(item(" \n ")), vec![]);
}

#[test]
fn d31_departure_the_old_assistant_message_item_naming_is_prose() {
    let steps = interpret(json!({"type": "item.completed", "item": {"item_type": "assistant_message", "text": "hi"}}));
    assert_eq!(steps, vec![message("hi")]);
}

#[test]
fn d31_turn_completed_is_a_bare_complete() {
    let steps = interpret(json!({"type": "turn.completed", "usage": {"input_tokens": 812, "output_tokens": 40}}));
    assert_eq!(steps, vec![HarnessStep::bare_complete()]);
}

#[test]
fn d31_every_other_cli_event_yields_nothing() {
    let frames = [
        json!({"type": "thread.started", "thread_id": "th_1"}),
        json!({"type": "turn.started"}),
        json!({"type": "item.started", "item": {"id": "i", "type": "agent_message", "text": "x"}}),
        json!({"type": "item.updated", "item": {"id": "i", "type": "agent_message", "text": "x"}}),
        json!({"type": "item.completed", "item": {"id": "i", "type": "reasoning", "text": "x"}}),
        json!({"type": "item.completed", "item": {"id": "i", "type": "mcp_tool_call", "server": "s", "tool": "t",
            "arguments": {}, "status": "completed"}}),
        json!({"type": "item.completed", "item": {"id": "i", "type": "command_execution", "command": "ls",
            "aggregated_output": "", "exit_code": 0, "status": "completed"}}),
        json!({"type": "item.completed", "item": {"id": "i", "type": "file_change", "changes": [], "status": "completed"}}),
        json!({"type": "function_call_output", "call_id": "c", "output": "{}"}),
        json!({"no_type": true}),
    ];
    for value in frames {
        assert_eq!(interpret(value.clone()), vec![], "{value}");
    }
}

// ---------------------------------------------------------------- D32, D38, D39

/// Codex in the shared codec contract (`codec_contract`): a completion keeps
/// its output as text; tools are functions; a result is a
/// `function_call_output` carrying the body text.
pub(crate) const CODEC: Codec = Codec {
    protocol: &CodexProtocol,
    writer: &CodexWriter,
    vendor: Vendor::Codex,
    protocol_id: "openai.responses.function-calling",
    completion: |output| HarnessStep::Complete { output: Some(json!({ "text": output.to_string() })), metadata: None },
    written_frames,
    described_tool: |schema| json!({"type": "function", "name": "files.read", "description": "Reads a file.", "parameters": schema}),
    catalogue_out_of_band: false,
    result_frame: |call_id, _tool, text, _is_error| json!({"type": "function_call_output", "call_id": call_id, "output": text}),
};

fn written_frames() {
    let arguments = object(json!({"path": ["Work", "Public"], "n": 1.5, "deep": {"x": [null, true]}}));
    let written = CodexWriter.tool_call("call_9", "files.read", &arguments);
    assert_eq!(written["arguments"], json!(Value::Object(arguments).to_string()), "arguments travel as text");
}

// ---------------------------------------------------------------- live streams (45)

fn stream(name: &str) -> StreamReading {
    let path = format!("{}/tests/streams/codex/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("stream file");
    read_stream(&mut CodexLiveReader::default(), &text)
}

fn show(step: &LiveStep) -> String {
    let origin = step.origin.map(|origin| format!(" {origin:?}")).unwrap_or_default();
    let what = match &step.step {
        HarnessStep::ToolCall { call_id, tool, arguments } => {
            format!("call {call_id} {tool} {}", Value::Object(arguments.clone()))
        }
        HarnessStep::Message { text } => format!("message {text:?}"),
        HarnessStep::Complete { output, metadata } => format!(
            "complete {} {}",
            output.clone().unwrap_or(Value::Null),
            metadata.clone().map(Value::Object).unwrap_or(Value::Null)
        ),
        HarnessStep::Failed { error } => format!("failed {} {:?} {:?}", error.code, error.message, error.retryable),
    };
    format!("{} {what}{origin}", step.line)
}

fn shown(reading: &StreamReading) -> Vec<String> {
    reading.steps.iter().map(show).collect()
}

fn counts(pairs: &[(IgnoredKind, usize)]) -> BTreeMap<IgnoredKind, usize> {
    pairs.iter().copied().collect()
}

fn complete(text: &str, line: usize) -> LiveOutcome {
    LiveOutcome::Complete { output: json!({ "text": text }), line }
}

#[test]
fn s45_mcp_and_shell_calls_are_observed_once_each() {
    let reading = stream("mcp-calls.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"4 call item_1 files.list {"path":["Work"]} RanByCli"#,
            r#"6 call item_2 files.read {"path":["Work","Private"]} RanByCli"#,
            r#"8 call item_3 command_execution {"command":"bash -lc 'ls -1'"} RanByCli"#,
            r#"10 call item_4 file_change {"changes":[{"kind":"update","path":"notes.md"}]} RanByCli"#,
            r#"11 message "The Work folder holds Public and Private; Private is not readable with this grant.""#,
            r#"12 complete {"text":"The Work folder holds Public and Private; Private is not readable with this grant."} {"usage":{"cached_input_tokens":3072,"input_tokens":5120,"output_tokens":214}}"#,
        ]
    );
    assert_eq!(
        reading.outcome,
        complete("The Work folder holds Public and Private; Private is not readable with this grant.", 12)
    );
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 3)]));
}

#[test]
fn s45_retry_notices_do_not_end_a_turn_that_then_succeeds() {
    let reading = stream("retry-then-success.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"5 message "Done: the note is saved.""#,
            r#"6 complete {"text":"Done: the note is saved."} {"usage":{"cached_input_tokens":0,"input_tokens":980,"output_tokens":17}}"#,
        ]
    );
    assert_eq!(reading.outcome, complete("Done: the note is saved.", 6));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 4)]));
}

#[test]
fn s45_turn_failed_after_an_error_notice_fails_with_its_own_message() {
    let reading = stream("failed-after-error.jsonl");
    let message = "exceeded retry limit, last status: 503 Service Unavailable";
    assert_eq!(shown(&reading), [format!("5 failed harness_failed {message:?} Some(true)")]);
    assert_eq!(
        reading.outcome,
        LiveOutcome::Failed { code: "harness_failed".into(), message: message.into(), retryable: true, line: 5 }
    );
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 4)]));
}

#[test]
fn s45_a_blank_turn_failed_reports_the_remembered_error_notice() {
    let text = "{\"type\":\"turn.started\"}\n\
        {\"type\":\"error\",\"message\":\"Reconnecting... 5/5 (401 Unauthorized)\"}\n\
        {\"type\":\"turn.failed\",\"error\":{\"message\":\"\"}}\n";
    let reading = read_stream(&mut CodexLiveReader::default(), text);
    assert_eq!(
        reading.outcome,
        LiveOutcome::Failed {
            code: "harness_failed".into(),
            message: "Reconnecting... 5/5 (401 Unauthorized)".into(),
            retryable: true,
            line: 3
        }
    );
    let bare = read_stream(&mut CodexLiveReader::default(), "{\"type\":\"turn.failed\"}\n");
    assert_eq!(
        bare.outcome,
        LiveOutcome::Failed {
            code: "harness_failed".into(),
            message: "The Codex CLI reported a failed turn.".into(),
            retryable: true,
            line: 1
        }
    );
}

#[test]
fn s45_an_interrupted_turn_has_no_outcome_but_keeps_its_started_call() {
    let reading = stream("interrupted.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"3 message "Reading the public folder first.""#,
            r#"4 call item_1 files.read {"path":["Work","Public"]} RanByCli"#,
        ]
    );
    assert_eq!(reading.outcome, LiveOutcome::NoOutcome);
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 3)]));
}

#[test]
fn s45_the_old_item_type_naming_reads_like_the_new() {
    let reading = stream("old-item-naming.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"4 call item_1 command_execution {"command":"bash -lc 'echo PING > note.txt'"} RanByCli"#,
            r#"6 call item_2 files.write {} RanByCli"#,
            r#"7 message "Created note.txt with PING.""#,
            r#"8 complete {"text":"Created note.txt with PING."} {"usage":{"cached_input_tokens":0,"input_tokens":2100,"output_tokens":48}}"#,
        ]
    );
    assert_eq!(reading.outcome, complete("Created note.txt with PING.", 8));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 3)]));
}

#[test]
fn s45_the_last_agent_message_is_the_answer() {
    let reading = stream("last-agent-message-wins.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"3 message "I'll check the calendar first.""#,
            r#"4 call item_1 calendar.list {} RanByCli"#,
            r#"7 message "Nothing is scheduled for tomorrow.""#,
            r#"8 complete {"text":"Nothing is scheduled for tomorrow."} {"usage":{"cached_input_tokens":512,"input_tokens":1500,"output_tokens":30}}"#,
        ]
    );
    assert_eq!(reading.outcome, complete("Nothing is scheduled for tomorrow.", 8));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 3)]));
}

#[test]
fn s45_noise_is_counted_by_kind_and_objects_after_the_terminal_are_not_read() {
    let reading = stream("noise-and-trailing-output.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"10 message "All set.""#,
            r#"11 complete {"text":"All set."} {"usage":{"cached_input_tokens":0,"input_tokens":400,"output_tokens":9}}"#,
        ]
    );
    assert_eq!(reading.outcome, complete("All set.", 11));
    assert_eq!(
        reading.ignored,
        counts(&[
            (IgnoredKind::Blank, 1),
            (IgnoredKind::NotJson, 2),
            (IgnoredKind::NotObject, 1),
            (IgnoredKind::Irrelevant, 3),
            (IgnoredKind::Unknown, 2),
            (IgnoredKind::Malformed, 1),
            (IgnoredKind::AfterTerminal, 1),
        ])
    );
}

#[test]
fn s45_a_call_item_without_an_id_is_reported_on_completion_only() {
    let text = "{\"type\":\"item.started\",\"item\":{\"type\":\"mcp_tool_call\",\"server\":\"s\",\"tool\":\"t\",\"arguments\":{\"a\":1}}}\n\
        {\"type\":\"item.completed\",\"item\":{\"type\":\"mcp_tool_call\",\"server\":\"s\",\"tool\":\"t\",\"arguments\":{\"a\":1}}}\n\
        {\"type\":\"item.completed\",\"item\":{\"id\":\"item_7\",\"type\":\"mcp_tool_call\",\"server\":\"s\",\"tool\":\"u\",\"arguments\":\"{\\\"b\\\":2}\"}}\n\
        {\"type\":\"item.completed\",\"item\":{\"id\":\"item_7\",\"type\":\"mcp_tool_call\",\"server\":\"s\",\"tool\":\"u\"}}\n\
        {\"type\":\"item.completed\",\"item\":{\"id\":\"item_8\",\"type\":\"mcp_tool_call\",\"server\":\"s\",\"tool\":\"v\",\"arguments\":[1]}}\n";
    let reading = read_stream(&mut CodexLiveReader::default(), text);
    assert_eq!(shown(&reading), [r#"2 call line_2 t {"a":1} RanByCli"#, r#"3 call item_7 u {"b":2} RanByCli"#]);
    assert_eq!(reading.outcome, LiveOutcome::NoOutcome);
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1), (IgnoredKind::Malformed, 1)]));
}

#[test]
fn s45_the_responses_shapes_are_not_read_on_the_cli_stream() {
    let text = "{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"t\",\"arguments\":\"{}\"}\n\
        {\"type\":\"response.completed\",\"response\":{}}\n";
    let reading = read_stream(&mut CodexLiveReader::default(), text);
    assert_eq!(reading.steps, vec![]);
    assert_eq!(reading.outcome, LiveOutcome::NoOutcome);
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Unknown, 2)]));
}

#[test]
fn s45_interpret_and_the_live_reader_agree_on_each_cli_terminal() {
    let completed = json!({"type": "turn.completed", "usage": {"input_tokens": 1}});
    assert_eq!(interpret(completed.clone()), vec![HarnessStep::bare_complete()]);
    let mut reader = CodexLiveReader::default();
    let reading = reader.read_line(1, &completed.to_string());
    assert!(matches!(reading.steps[0].step, HarnessStep::Complete { .. }));
    let failed_line = json!({"type": "turn.failed", "error": {"message": "quota"}});
    let mut reader = CodexLiveReader::default();
    let reading = reader.read_line(1, &failed_line.to_string());
    assert_eq!(reading.steps[0].step, interpret(failed_line)[0]);
}

// ---------------------------------------------------------------- properties

/// Keys this vendor's frames use.
const KEYS: &[&str] = &[
    "type",
    "item",
    "id",
    "item_type",
    "text",
    "tool",
    "arguments",
    "command",
    "error",
    "message",
    "code",
    "usage",
    "call_id",
    "name",
    "response",
    "output_text",
    "content",
];

/// Frame types this vendor's streams carry.
const TYPES: &[&str] = &[
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "error",
    "function_call",
    "response.failed",
    "response.completed",
    "message",
    "agent_message",
    "assistant_message",
    "mcp_tool_call",
    "command_execution",
    "output_text",
    "reasoning",
];

fn arb_json() -> impl Strategy<Value = Value> {
    arbitrary::json(KEYS, TYPES)
}

fn arb_frame() -> impl Strategy<Value = HarnessFrame> {
    arbitrary::frame(KEYS, TYPES)
}

fn arb_arguments() -> impl Strategy<Value = Map<String, Value>> {
    arbitrary::arguments(KEYS, TYPES)
}

proptest! {
    #[test]
    fn d38_prop_writer_round_trips_calls(call_id in ".{1,16}", tool in ".{1,16}", arguments in arb_arguments()) {
        codec_contract::call_round_trips(&CODEC, call_id, tool, arguments)?;
    }

    #[test]
    fn d38_prop_writer_round_trips_messages_and_completions(text in ".*", output in arb_json()) {
        codec_contract::message_round_trips(&CODEC, text)?;
        codec_contract::completion_round_trips(&CODEC, &output)?;
    }

    #[test]
    fn interpret_never_panics_on_arbitrary_frames(frame in arb_frame(), value in arb_json()) {
        let _ = CodexProtocol.interpret(&frame);
        if let Value::Object(map) = value {
            let _ = CodexProtocol.interpret(&map);
        }
    }

    #[test]
    fn the_live_reader_never_panics_on_arbitrary_lines(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        frames in prop::collection::vec(arb_frame(), 0..8),
        values in prop::collection::vec(arb_json(), 0..4),
    ) {
        let text = codec_contract::arbitrary_lines(&bytes, &frames, &values);
        codec_contract::reading_never_fails_with_success(&read_stream(&mut CodexLiveReader::default(), &text))?;
    }
}
