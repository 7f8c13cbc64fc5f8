//! The Claude Code codec: `interpret` (D33, D34; the result frame, D38 and
//! D39 through the shared codec contract, whose Claude Code facts are
//! [`CODEC`]), its departures from SharedOS's reading, and the live reader
//! over captured-shape streams (`tests/streams/claude-code`). Tests of a
//! departure say so in their name.

use crate::arbitrary;
use crate::codec_contract::{self, Codec};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use sharedos_drivers::codec::claude_code::{ClaudeCodeLiveReader, ClaudeCodeProtocol, ClaudeCodeWriter};
use sharedos_drivers::frame::{HarnessFrame, HarnessStep};
use sharedos_drivers::live::{read_stream, IgnoredKind, LiveOutcome, LiveStep, LiveStreamReader, StreamReading};
use sharedos_drivers::protocol::{HarnessFrameWriter, HarnessProtocol};
use sharedos_drivers::vendor::Vendor;
use sharedos_testkit::json::object;
use std::collections::BTreeMap;

const FIXED: &str = "The Claude Code harness reported a failure.";

fn interpret(value: Value) -> Vec<HarnessStep> {
    ClaudeCodeProtocol.interpret(&object(value))
}

fn assistant(content: Value) -> Value {
    json!({"type": "assistant", "message": {"role": "assistant", "content": content}})
}

fn call(call_id: &str, tool: &str, arguments: Value) -> HarnessStep {
    HarnessStep::ToolCall { call_id: call_id.into(), tool: tool.into(), arguments: object(arguments) }
}

fn message(text: &str) -> HarnessStep {
    HarnessStep::Message { text: text.into() }
}

fn failed(code: &str, message: &str) -> HarnessStep {
    HarnessStep::failed(code, message, true)
}

/// A failure that running the turn again would meet again: not retryable.
fn final_failure(code: &str, message: &str) -> HarnessStep {
    HarnessStep::failed(code, message, false)
}

fn completed(text: &str) -> HarnessStep {
    HarnessStep::Complete { output: Some(json!({ "text": text })), metadata: None }
}

// ---------------------------------------------------------------- D33

#[test]
fn d33_an_assistant_frame_yields_prose_and_calls_in_block_order() {
    let steps = interpret(assistant(json!([
        {"type": "text", "text": "Reading both."},
        {"type": "tool_use", "id": "toolu_1", "name": "files.read", "input": {"path": ["Work", "Public"]}},
        {"type": "tool_use", "id": "toolu_2", "name": "files.read", "input": {"path": ["Work", "Private"]}},
    ])));
    assert_eq!(
        steps,
        vec![
            message("Reading both."),
            call("toolu_1", "files.read", json!({"path": ["Work", "Public"]})),
            call("toolu_2", "files.read", json!({"path": ["Work", "Private"]})),
        ]
    );
}

#[test]
fn d33_a_tool_use_without_input_has_empty_arguments() {
    let steps = interpret(assistant(json!([{"type": "tool_use", "id": "toolu_1", "name": "clock.now"}])));
    assert_eq!(steps, vec![call("toolu_1", "clock.now", json!({}))]);
}

#[test]
fn d33_a_result_with_is_error_fails_retryably_coded_by_its_subtype() {
    let steps = interpret(json!({"type": "result", "subtype": "error_max_turns", "is_error": true, "num_turns": 6}));
    assert_eq!(steps, vec![final_failure("error_max_turns", FIXED)]);
    let steps = interpret(json!({"type": "result", "subtype": "error", "result": "it broke"}));
    assert_eq!(steps, vec![failed("error", "it broke")]);
    let steps = interpret(json!({"type": "result", "is_error": true}));
    assert_eq!(steps, vec![failed("harness_failed", FIXED)]);
}

#[test]
fn d33_any_other_result_completes_with_its_text_or_bare() {
    assert_eq!(
        interpret(json!({"type": "result", "subtype": "success", "is_error": false, "result": "ok"})),
        vec![completed("ok")]
    );
    assert_eq!(interpret(json!({"type": "result", "subtype": "success"})), vec![HarnessStep::bare_complete()]);
    assert_eq!(interpret(json!({"type": "result", "subtype": "future_status"})), vec![HarnessStep::bare_complete()]);
    assert_eq!(interpret(json!({"type": "result", "is_error": "yes"})), vec![], "a mistyped flag voids the frame");
}

#[test]
fn d33_other_frames_yield_nothing() {
    let frames = [
        json!({"type": "system", "subtype": "init", "session_id": "s"}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}}),
        json!({"type": "stream_event", "event": {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}}),
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}),
        json!({"type": "assistant"}),
        json!({"type": "assistant", "message": {"content": "text"}}),
        json!({"kind": "assistant"}),
    ];
    for value in frames {
        assert_eq!(interpret(value.clone()), vec![], "{value}");
    }
}

#[test]
fn d33_departure_success_with_is_error_fails_with_a_code_derived_from_the_error() {
    let base =
        json!({"type": "result", "subtype": "success", "is_error": true, "result": "API Error: Rate limit reached"});
    let mut named = object(base.clone());
    named.insert("error".into(), json!("rate_limit"));
    named.insert("api_error_status".into(), json!(429));
    assert_eq!(ClaudeCodeProtocol.interpret(&named), vec![failed("rate_limit", "API Error: Rate limit reached")]);
    let mut status = object(base.clone());
    status.insert("api_error_status".into(), json!(401));
    assert_eq!(
        ClaudeCodeProtocol.interpret(&status),
        vec![final_failure("api_error_401", "API Error: Rate limit reached")]
    );
    let mut neither = object(base);
    neither.insert("api_error_status".into(), Value::Null);
    assert_eq!(ClaudeCodeProtocol.interpret(&neither), vec![failed("harness_failed", "API Error: Rate limit reached")]);
}

/// What Claude Code 2.1.328 writes on a failed `result` (captured in
/// `tests/streams/claude-code/real-2.1.328`): `api_error` names what
/// failed, `unknown` names nothing, and `terminal_reason` says why the turn
/// stopped when nothing else does.
#[test]
fn d33_departure_api_error_names_the_failure_and_unknown_names_nothing() {
    let result = |fields: Value| {
        let mut frame =
            object(json!({"type": "result", "subtype": "success", "is_error": true, "result": "API Error"}));
        frame.extend(object(fields));
        ClaudeCodeProtocol.interpret(&frame)
    };
    let dropped = result(json!({"api_error": "connection_failed", "error": "server_error", "api_error_status": null}));
    assert_eq!(dropped, vec![failed("connection_failed", "API Error")]);
    let bad_request = result(json!({"error": "unknown", "api_error": "unknown", "api_error_status": 400}));
    assert_eq!(bad_request, vec![final_failure("api_error_400", "API Error")]);
    let reason_only = result(json!({"api_error_status": null, "terminal_reason": "api_error"}));
    assert_eq!(reason_only, vec![failed("api_error", "API Error")]);
    let completed_reason = result(json!({"terminal_reason": "completed"}));
    assert_eq!(completed_reason, vec![failed("harness_failed", "API Error")]);
}

#[test]
fn d33_departure_an_error_subtype_fails_without_is_error() {
    let steps = interpret(json!({"type": "result", "subtype": "error_during_execution", "is_error": false}));
    assert_eq!(steps, vec![failed("error_during_execution", FIXED)]);
    let steps = interpret(json!({"type": "result", "subtype": "error_max_budget_usd"}));
    assert_eq!(steps, vec![final_failure("error_max_budget_usd", FIXED)]);
}

#[test]
fn d33_departure_an_error_subtype_takes_its_message_from_errors() {
    let steps = interpret(json!({
        "type": "result", "subtype": "error_max_turns", "is_error": true, "result": "",
        "errors": ["Reached maximum number of turns (6)", 3, " ", "Stopped"],
    }));
    assert_eq!(steps, vec![final_failure("error_max_turns", "Reached maximum number of turns (6); Stopped")]);
}

#[test]
fn d33_departure_sub_agent_frames_give_nothing() {
    let mut frame = object(assistant(json!([
        {"type": "text", "text": "Listing."},
        {"type": "tool_use", "id": "toolu_9", "name": "files.list", "input": {}},
    ])));
    frame.insert("parent_tool_use_id".into(), json!("toolu_task"));
    assert_eq!(ClaudeCodeProtocol.interpret(&frame), vec![]);
    frame.insert("parent_tool_use_id".into(), Value::Null);
    assert_eq!(ClaudeCodeProtocol.interpret(&frame).len(), 2, "a null parent is the turn itself");
}

#[test]
fn d33_departure_the_synthetic_frame_gives_no_prose() {
    let synthetic = json!({"type": "assistant", "message": {"model": "<synthetic>", "role": "assistant",
        "content": [{"type": "text", "text": "API Error: 401"}]}, "parent_tool_use_id": null, "error": "authentication_failed"});
    assert_eq!(interpret(synthetic), vec![]);
    let model_only =
        json!({"type": "assistant", "message": {"model": "<synthetic>", "content": [{"type": "text", "text": "x"}]}});
    assert_eq!(interpret(model_only), vec![]);
    let error_only =
        json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "x"}]}, "error": "unknown"});
    assert_eq!(interpret(error_only), vec![]);
}

// ---------------------------------------------------------------- D34

#[test]
fn d34_call_blocks_with_non_object_input_or_empty_id_or_name_are_dropped() {
    let steps = interpret(assistant(json!([
        {"type": "tool_use", "id": "a", "name": "t", "input": [1]},
        {"type": "tool_use", "id": "b", "name": "t", "input": "text"},
        {"type": "tool_use", "id": "c", "name": "t", "input": null},
        {"type": "tool_use", "id": "", "name": "t", "input": {}},
        {"type": "tool_use", "id": "e", "name": "", "input": {}},
        {"type": "tool_use", "name": "t", "input": {}},
        {"type": "thinking", "thinking": "hm"},
        {"type": "text", "text": "kept"},
    ])));
    assert_eq!(steps, vec![message("kept")]);
}

#[test]
fn d34_a_block_without_a_string_type_voids_the_whole_frame() {
    for odd in [json!({"text": "no type"}), json!({"type": 3}), json!("text"), Value::Null] {
        let steps = interpret(assistant(json!([
            {"type": "text", "text": "lost"},
            {"type": "tool_use", "id": "a", "name": "t", "input": {}},
            odd,
        ])));
        assert_eq!(steps, vec![]);
    }
}

// ---------------------------------------------------------------- D33, D38, D39

/// Claude Code in the shared codec contract (`codec_contract`): a completion
/// keeps its output as text; tools carry an `input_schema`; a result is a
/// user `tool_result` whose `is_error` means it did not succeed.
pub(crate) const CODEC: Codec = Codec {
    protocol: &ClaudeCodeProtocol,
    writer: &ClaudeCodeWriter,
    vendor: Vendor::ClaudeCode,
    protocol_id: "anthropic.messages.stream-json",
    completion: |output| completed(&output.to_string()),
    written_frames,
    described_tool: |schema| json!({"name": "files.read", "description": "Reads a file.", "input_schema": schema}),
    catalogue_out_of_band: false,
    result_frame: |call_id, _tool, text, is_error| {
        json!({"type": "user", "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": call_id, "is_error": is_error,
            "content": [{"type": "text", "text": text}],
        }]}})
    },
};

fn written_frames() {
    let bare = ClaudeCodeWriter.complete(None);
    assert_eq!(Value::Object(bare), json!({"type": "result", "subtype": "success", "is_error": false}));
}

// ---------------------------------------------------------------- live streams (45)

fn stream(name: &str) -> StreamReading {
    let path = format!("{}/tests/streams/claude-code/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("stream file");
    read_stream(&mut ClaudeCodeLiveReader::default(), &text)
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
            metadata.as_ref().map_or("-".to_string(), |metadata| metadata
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(","))
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

fn failure(code: &str, message: &str, line: usize) -> LiveOutcome {
    let retryable = !matches!(code, "error_max_turns" | "api_error_400" | "api_error_401" | "max_output_tokens");
    LiveOutcome::Failed { code: code.into(), message: message.into(), retryable, line }
}

#[test]
fn s45_a_successful_run_gives_prose_observed_calls_and_the_result() {
    let reading = stream("success.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"2 message "I'll list the Work folder.""#,
            r#"3 call toolu_01L mcp__sharedos__files_list {"path":["Work"]} RanByCli"#,
            r#"5 message "Work holds Public and Private.""#,
            r#"6 complete {"text":"Work holds Public and Private."} usage"#,
        ]
    );
    assert_eq!(reading.outcome, complete("Work holds Public and Private.", 6));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1)]));
}

#[test]
fn s45_an_api_failure_reported_as_success_fails_with_the_synthetic_frames_code() {
    let reading = stream("api-failure-synthetic.jsonl");
    assert_eq!(shown(&reading), [r#"4 failed rate_limit "API Error: Rate limit reached" Some(true)"#]);
    assert_eq!(reading.outcome, failure("rate_limit", "API Error: Rate limit reached", 4));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 3)]));
}

#[test]
fn s45_an_api_failure_without_an_error_name_is_coded_by_its_status() {
    let reading = stream("api-failure-status-only.jsonl");
    let message = "Invalid API key · Please run /login";
    assert_eq!(shown(&reading), [format!("2 failed api_error_401 {message:?} None")]);
    assert_eq!(reading.outcome, failure("api_error_401", message, 2));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1)]));
}

#[test]
fn s45_the_synthetic_frames_api_error_codes_a_result_that_names_none() {
    let synthetic = |fields: Value| {
        let mut frame = object(json!({"type": "assistant", "parent_tool_use_id": null,
            "message": {"model": "<synthetic>", "role": "assistant", "content": [{"type": "text", "text": "API Error"}]}}));
        frame.extend(object(fields));
        Value::Object(frame).to_string()
    };
    let result = json!({"type": "result", "subtype": "success", "is_error": true, "result": "API Error"}).to_string();
    let idle = format!("{}\n{result}\n", synthetic(json!({"error": "unknown", "api_error": "stream_idle_timeout"})));
    let reading = read_stream(&mut ClaudeCodeLiveReader::default(), &idle);
    assert_eq!(reading.outcome, failure("stream_idle_timeout", "API Error", 2));
    let unclassed = format!("{}\n{result}\n", synthetic(json!({"error": "unknown"})));
    let reading = read_stream(&mut ClaudeCodeLiveReader::default(), &unclassed);
    assert_eq!(reading.outcome, failure("harness_failed", "API Error", 2));
}

#[test]
fn s45_error_max_turns_fails_with_the_message_from_errors() {
    let reading = stream("error-max-turns.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"2 call toolu_02A mcp__sharedos__files_read {"path":["Work","Public","a.md"]} RanByCli"#,
            r#"4 call toolu_02B mcp__sharedos__files_read {"path":["Work","Public","b.md"]} RanByCli"#,
            r#"6 failed error_max_turns "Reached maximum number of turns (2)" None"#,
        ]
    );
    assert_eq!(reading.outcome, failure("error_max_turns", "Reached maximum number of turns (2)", 6));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1)]));
}

#[test]
fn s45_an_error_subtype_without_is_error_fails() {
    let reading = stream("error-subtype-without-is-error.jsonl");
    let message = "Tool permission stream closed before the response was received; Aborted";
    assert_eq!(
        shown(&reading),
        [r#"2 message "Starting.""#.to_string(), format!("3 failed error_during_execution {message:?} Some(true)")]
    );
    assert_eq!(reading.outcome, failure("error_during_execution", message, 3));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1)]));
}

#[test]
fn s45_sub_agent_frames_belong_to_another_session() {
    let reading = stream("sub-agent.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"2 message "Delegating the search.""#,
            r#"2 call toolu_04T Task {"description":"find notes","prompt":"List notes under Work.","subagent_type":"general-purpose"} RanByCli"#,
            r#"8 message "There is one note: notes.md.""#,
            r#"9 complete {"text":"There is one note: notes.md."} usage"#,
        ]
    );
    assert_eq!(reading.outcome, complete("There is one note: notes.md.", 9));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1), (IgnoredKind::OtherSession, 4)]));
}

#[test]
fn s45_blocks_split_over_frames_sharing_a_message_id_read_like_one_frame() {
    let reading = stream("split-blocks.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"3 message "Reading both.""#,
            r#"4 call toolu_05P mcp__sharedos__files_read {"path":["Work","Public"]} RanByCli"#,
            r#"5 call toolu_05Q mcp__sharedos__files_read {"path":["Work","Private"]} RanByCli"#,
            r#"8 message "Public is open.""#,
            r#"8 message "Private was refused.""#,
            r#"9 complete {"text":"Public is open.\nPrivate was refused."} usage"#,
        ]
    );
    assert_eq!(reading.outcome, complete("Public is open.\nPrivate was refused.", 9));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 2)]));
}

#[test]
fn s45_partial_message_events_are_irrelevant_beside_the_consolidated_frame() {
    let reading = stream("partial-messages.jsonl");
    assert_eq!(shown(&reading), [r#"6 message "Hello there.""#, r#"11 complete {"text":"Hello there."} usage"#]);
    assert_eq!(reading.outcome, complete("Hello there.", 11));
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 9)]));
}

#[test]
fn s45_objects_after_the_result_are_not_read_and_other_lines_keep_their_kind() {
    let reading = stream("trailing-garbage.jsonl");
    assert_eq!(shown(&reading), [r#"2 message "Done.""#, r#"3 complete {"text":"Done."} usage"#]);
    assert_eq!(reading.outcome, complete("Done.", 3));
    assert_eq!(
        reading.ignored,
        counts(&[
            (IgnoredKind::Irrelevant, 1),
            (IgnoredKind::Blank, 1),
            (IgnoredKind::NotJson, 1),
            (IgnoredKind::NotObject, 1),
            (IgnoredKind::AfterTerminal, 1),
        ])
    );
}

#[test]
fn s45_a_truncated_stream_has_no_outcome() {
    let reading = stream("truncated.jsonl");
    assert_eq!(
        shown(&reading),
        [
            r#"2 message "Working on it.""#,
            r#"3 call toolu_08R mcp__sharedos__files_read {"path":["Work","Public"]} RanByCli"#,
        ]
    );
    assert_eq!(reading.outcome, LiveOutcome::NoOutcome);
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1), (IgnoredKind::NotJson, 1)]));
}

#[test]
fn s45_a_repeated_tool_use_id_is_reported_once() {
    let frame = assistant(json!([{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}])).to_string();
    let text = format!("{frame}\n{frame}\n");
    let reading = read_stream(&mut ClaudeCodeLiveReader::default(), &text);
    assert_eq!(shown(&reading), [r#"1 call toolu_1 t {} RanByCli"#]);
    assert_eq!(reading.ignored, counts(&[(IgnoredKind::Irrelevant, 1)]));
}

#[test]
fn s45_odd_lines_are_counted_by_kind() {
    let text = "[1]\n{\"type\":\"assistant\",\"message\":{\"content\":[3]}}\n{\"type\":\"control_request\"}\n\
        {\"type\":\"result\",\"is_error\":\"yes\"}\n{\"no\":\"type\"}\n";
    let reading = read_stream(&mut ClaudeCodeLiveReader::default(), text);
    assert_eq!(reading.steps, vec![]);
    assert_eq!(reading.outcome, LiveOutcome::NoOutcome);
    assert_eq!(
        reading.ignored,
        counts(&[(IgnoredKind::NotObject, 1), (IgnoredKind::Malformed, 2), (IgnoredKind::Unknown, 2)])
    );
}

#[test]
fn s45_interpret_and_the_live_reader_agree_on_each_result() {
    let results = [
        json!({"type": "result", "subtype": "success", "is_error": false, "result": "ok"}),
        json!({"type": "result", "subtype": "success", "is_error": true, "api_error_status": 529, "result": "Overloaded"}),
        json!({"type": "result", "subtype": "error_max_turns", "is_error": true, "errors": ["max"]}),
        json!({"type": "result", "subtype": "error_during_execution", "errors": []}),
    ];
    for value in results {
        let mut reader = ClaudeCodeLiveReader::default();
        let reading = reader.read_line(1, &value.to_string());
        assert_eq!(reading.steps.len(), 1);
        assert_eq!(reading.steps[0].step, interpret(value.clone())[0], "{value}");
    }
}

// ---------------------------------------------------------------- properties

/// Keys this vendor's frames use.
const KEYS: &[&str] = &[
    "type",
    "message",
    "content",
    "id",
    "name",
    "input",
    "text",
    "subtype",
    "is_error",
    "result",
    "errors",
    "error",
    "api_error_status",
    "parent_tool_use_id",
    "model",
    "usage",
];

/// Frame types this vendor's streams carry.
const TYPES: &[&str] = &[
    "assistant",
    "user",
    "system",
    "result",
    "stream_event",
    "rate_limit_event",
    "text",
    "tool_use",
    "thinking",
    "success",
    "error_max_turns",
    "error",
    "<synthetic>",
    "rate_limit",
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
    fn interpret_never_panics_and_never_fails_with_success(frame in arb_frame(), value in arb_json()) {
        codec_contract::interpret_never_fails_with_success(&CODEC, &frame)?;
        if let Value::Object(map) = value {
            codec_contract::interpret_never_fails_with_success(&CODEC, &map)?;
        }
    }

    #[test]
    fn the_live_reader_never_panics_on_arbitrary_lines(
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        frames in prop::collection::vec(arb_frame(), 0..8),
        values in prop::collection::vec(arb_json(), 0..4),
    ) {
        let text = codec_contract::arbitrary_lines(&bytes, &frames, &values);
        codec_contract::reading_never_fails_with_success(&read_stream(&mut ClaudeCodeLiveReader::default(), &text))?;
    }
}
