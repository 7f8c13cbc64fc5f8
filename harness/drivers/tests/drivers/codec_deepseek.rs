//! DeepSeek Harness codec: frames (D35, D36), the live reader over captured
//! streams, and the facts the shared codec contract checks it against
//! ([`CODEC`]: the result frame, writer round trips (D38), tool descriptions
//! (D39)).

use crate::arbitrary;
use crate::codec_contract::{self, Codec};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use sharedos_drivers::codec::deepseek::{DeepSeekLiveReader, DeepSeekProtocol, DeepSeekWriter};
use sharedos_drivers::frame::HarnessStep;
use sharedos_drivers::live::{read_stream, LiveStreamReader};
use sharedos_drivers::protocol::{HarnessFrameWriter, HarnessProtocol};
use sharedos_drivers::vendor::Vendor;
use sharedos_testkit::json::object;

fn read(value: Value) -> Vec<HarnessStep> {
    DeepSeekProtocol.interpret(&object(value))
}

fn wrapped(session: &str, kind: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session.event",
        "params": {"sessionId": session, "event": {"type": kind, "seq": 1, "time": 0, "data": data}}})
}

fn event(kind: &str, data: Value) -> Value {
    wrapped("s1", kind, data)
}

fn steps_json(steps: &[HarnessStep]) -> Value {
    serde_json::to_value(steps).unwrap()
}

fn turn_end(reason: Value) -> Vec<HarnessStep> {
    read(event("turn/end", json!({"turn": 1, "reason": reason})))
}

fn stream(name: &str, reader: &mut dyn LiveStreamReader) -> Value {
    let path = format!("{}/tests/streams/deepseek/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::to_value(read_stream(reader, &text)).unwrap()
}

fn lines(reader: &mut dyn LiveStreamReader, frames: &[Value]) -> Value {
    let text: String = frames.iter().map(|frame| format!("{frame}\n")).collect();
    serde_json::to_value(read_stream(reader, &text)).unwrap()
}

// ---- D35: reading events -------------------------------------------------

#[test]
fn d35_wrapped_and_bare_events_are_read_identically() {
    let data = json!({"turn": 2, "step": 1, "callId": "c7", "name": "files.search", "arguments": ""});
    let bare = read(json!({"type": "tool/call", "data": data}));
    assert_eq!(bare, read(event("tool/call", data.clone())));
    assert_eq!(
        steps_json(&bare),
        json!([{"type": "tool_call", "callId": "c7", "tool": "files.search", "arguments": {}}])
    );
    let prose = json!({"message": {"content": [{"type": "text", "text": "Hi."}]}});
    assert_eq!(read(json!({"type": "assistant/message", "data": prose})), read(event("assistant/message", prose)));
}

#[test]
fn d35_tool_call_events_are_the_only_source_of_calls() {
    let steps = read(event(
        "assistant/message",
        json!({"message": {"role": "assistant", "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "files.read", "input": {}},
            {"type": "reasoning", "text": "hidden"},
            {"type": "text", "text": "Then listing."},
        ]}}),
    ));
    assert_eq!(
        steps_json(&steps),
        json!([{"type": "message", "text": "Reading."}, {"type": "message", "text": "Then listing."}])
    );
    let call =
        read(event("tool/call", json!({"callId": "c1", "name": "files.read", "arguments": "{\"path\":[\"Work\"]}"})));
    assert_eq!(
        steps_json(&call),
        json!([{"type": "tool_call", "callId": "c1", "tool": "files.read", "arguments": {"path": ["Work"]}}])
    );
}

#[test]
fn d35_a_malformed_tool_call_payload_yields_nothing() {
    for data in [
        json!({"name": "files.read", "arguments": "{}"}),
        json!({"callId": "", "name": "files.read", "arguments": "{}"}),
        json!({"callId": "c1", "name": "", "arguments": "{}"}),
        json!({"callId": "c1", "name": "files.read", "arguments": {"path": []}}),
        json!({"callId": "c1", "name": "files.read"}),
        json!({"callId": 7, "name": "files.read", "arguments": "{}"}),
    ] {
        assert_eq!(read(event("tool/call", data.clone())), Vec::new(), "{data}");
    }
    assert_eq!(read(json!({"type": "tool/call", "data": "c1"})), Vec::new());
    assert_eq!(read(json!({"method": "session.event", "params": {"event": {"type": "tool/call"}}})), Vec::new());
}

#[test]
fn d35_unparseable_arguments_give_a_non_retryable_failure() {
    for raw in ["[1,2]", "not json", "null", "7", "\"text\""] {
        let steps = read(event("tool/call", json!({"callId": "c1", "name": "files.read", "arguments": raw})));
        assert_eq!(
            steps_json(&steps),
            json!([{"type": "failed", "error": {"code": "harness_arguments_unparseable",
                "message": "DeepSeek Harness sent tool arguments that do not parse to a JSON object."}}]),
            "{raw}"
        );
    }
    let blank = read(event("tool/call", json!({"callId": "c1", "name": "files.read", "arguments": "  "})));
    assert_eq!(
        steps_json(&blank),
        json!([{"type": "tool_call", "callId": "c1", "tool": "files.read", "arguments": {}}])
    );
}

#[test]
fn d35_an_element_that_is_not_a_block_voids_the_assistant_message() {
    let steps = read(event(
        "assistant/message",
        json!({"message": {"content": [{"type": "text", "text": "kept?"}, {"text": "no type"}]}}),
    ));
    assert_eq!(steps, Vec::new());
    assert_eq!(read(event("assistant/message", json!({"message": {"content": "text"}}))), Vec::new());
}

#[test]
fn d35_frames_that_are_not_events_or_errors_give_nothing() {
    for value in [
        json!({"jsonrpc": "2.0", "id": 2, "result": {"messageId": "m1"}}),
        json!({"jsonrpc": "2.0", "method": "session.status", "params": {"sessionId": "s1", "status": "idle"}}),
        json!({"jsonrpc": "2.0", "method": "subagent.started", "params": {"parentSessionId": "s1", "childSessionId": "s2"}}),
        event("turn/start", json!({"turn": 1})),
        event("assistant/chunk", json!({"chunk": {"type": "text-delta", "text": "Hi"}})),
        event("tool/result", json!({"message": {}})),
        event("log/debug", json!({})),
        json!({"type": "", "data": {}}),
    ] {
        assert_eq!(read(value.clone()), Vec::new(), "{value}");
    }
}

/// Departure 2: the server answers a refused request with a JSON-RPC error
/// and emits nothing more, so an error response fails the turn.
#[test]
fn d35_departure_an_error_response_fails_the_turn() {
    let steps = read(json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Unknown session: s9"}}));
    assert_eq!(
        steps_json(&steps),
        json!([{"type": "failed", "error": {"code": "harness_request_rejected",
            "message": "Unknown session: s9", "details": {"rpcCode": -32602}}}])
    );
    let bare = read(json!({"id": "r1", "error": {}}));
    assert_eq!(
        steps_json(&bare),
        json!([{"type": "failed", "error": {"code": "harness_request_rejected",
            "message": "The DeepSeek Harness server answered request \"r1\" with an error."}}])
    );
    assert_eq!(read(json!({"id": 1, "error": "refused"})), Vec::new());
}

// ---- D36: turn/end and the result frame -----------------------------------

#[test]
fn d36_failing_kinds_give_a_retryable_failure() {
    for (kind, code) in [
        ("aborted", "harness_turn_aborted"),
        ("blocked", "harness_turn_blocked"),
        ("error", "harness_turn_error"),
        ("interrupted", "harness_turn_interrupted"),
    ] {
        let steps = turn_end(json!({"kind": kind}));
        let [HarnessStep::Failed { error }] = steps.as_slice() else { panic!("{kind}: {steps:?}") };
        assert_eq!((error.code.as_str(), error.retryable), (code, Some(true)));
        assert!(error.message.starts_with("The DeepSeek Harness turn "), "{}", error.message);
    }
    let vendor =
        turn_end(json!({"kind": "error", "error": {"code": "provider_error", "message": "503 from upstream"}}));
    assert_eq!(
        steps_json(&vendor),
        json!([{"type": "failed", "error": {"code": "provider_error", "message": "503 from upstream", "retryable": true}}])
    );
}

/// Departure 3: without `error.message`, the server's free-text reason is the message.
#[test]
fn d36_departure_a_failing_kind_falls_back_to_the_reason_text() {
    let steps = turn_end(json!({"kind": "blocked", "reason": "a hook refused the step"}));
    assert_eq!(
        steps_json(&steps),
        json!([{"type": "failed", "error": {"code": "harness_turn_blocked", "message": "a hook refused the step", "retryable": true}}])
    );
}

/// Departure 1: `max-tokens` is recorded but does not fail the turn.
#[test]
fn d36_departure_max_tokens_completes_and_records_the_kind() {
    let steps = turn_end(json!({"kind": "max-tokens"}));
    assert_eq!(steps_json(&steps), json!([{"type": "complete", "metadata": {"turnEndKind": "max-tokens"}}]));
}

#[test]
fn d36_every_other_kind_completes() {
    for kind in ["completed", "handoff", "max_tokens", "ABORTED"] {
        assert_eq!(turn_end(json!({"kind": kind})), vec![HarnessStep::bare_complete()], "{kind}");
    }
    for reason in [json!({}), json!({"kind": ""}), json!({"kind": 3}), json!("completed")] {
        assert_eq!(turn_end(reason.clone()), Vec::new(), "{reason}");
    }
}

// ---- D36, D38, D39: the shared codec contract ------------------------------

/// DeepSeek Harness in the shared codec contract (`codec_contract`): a
/// completion drops its output; tools are listed out of band in the tool
/// schema shape; a result is a `session/prompt` notification without a
/// session id.
pub(crate) const CODEC: Codec = Codec {
    protocol: &DeepSeekProtocol,
    writer: &DeepSeekWriter,
    vendor: Vendor::DeepSeek,
    protocol_id: "deepseek.harness.session-events",
    completion: |_output| HarnessStep::bare_complete(),
    written_frames,
    described_tool: |schema| json!({"name": "files.read", "description": "Reads a file.", "parameters": schema}),
    catalogue_out_of_band: true,
    result_frame: |call_id, _tool, text, is_error| {
        json!({"jsonrpc": "2.0", "method": "session/prompt", "params": {"contentBlocks": [{
            "type": "tool-result", "toolCallId": call_id, "content": [{"type": "text", "text": text}], "isError": is_error}]}})
    },
};

/// Written frames are wrapped events of `session-1`.
fn written_frames() {
    let frame = DeepSeekWriter.tool_call("c1", "files.read", &Map::new());
    assert_eq!(
        Value::Object(frame),
        json!({"jsonrpc": "2.0", "method": "session.event", "params": {"sessionId": "session-1", "event": {
            "type": "tool/call", "seq": 1, "time": 0,
            "data": {"turn": 1, "step": 1, "callId": "c1", "name": "files.read", "arguments": "{}"}}}})
    );
    let end = DeepSeekWriter.complete(Some(&json!("dropped")));
    assert_eq!(end["params"]["event"]["data"], json!({"turn": 1, "reason": {"kind": "completed"}}));
    let prose = DeepSeekWriter.message("Hi");
    assert_eq!(
        prose["params"]["event"]["data"],
        json!({"turn": 1, "step": 1, "message": {"role": "assistant", "content": [{"type": "text", "text": "Hi"}]}})
    );
}

// ---- Live reader over captured streams ------------------------------------

#[test]
fn d35_live_a_completed_turn_reports_the_call_as_ran_by_the_cli() {
    let reading = stream("completed_tool_call.jsonl", &mut DeepSeekLiveReader::default());
    assert_eq!(
        reading,
        json!({
            "steps": [
                {"line": 8, "step": {"type": "message", "text": "Let me look at the folder."}},
                {"line": 9, "step": {"type": "tool_call", "callId": "call-7", "tool": "files.list",
                    "arguments": {"path": ["Work", "Public"]}}, "origin": "ran_by_cli"},
                {"line": 13, "step": {"type": "message", "text": "Work/Public holds notes.md and plan.md."}},
                {"line": 15, "step": {"type": "complete", "output": {"text": "Work/Public holds notes.md and plan.md."}}},
            ],
            "outcome": {"type": "complete", "output": {"text": "Work/Public holds notes.md and plan.md."}, "line": 15},
            "ignored": {"irrelevant": 11, "after_terminal": 1},
        })
    );
}

#[test]
fn d36_live_other_sessions_and_a_child_turn_end_do_not_end_ours() {
    let expected = json!({
        "steps": [
            {"line": 3, "step": {"type": "message", "text": "I will ask a helper to count the files."}},
            {"line": 4, "step": {"type": "tool_call", "callId": "call-1", "tool": "agent.spawn",
                "arguments": {"task": "count files in Work"}}, "origin": "ran_by_cli"},
            {"line": 14, "step": {"type": "message", "text": "The helper counted 2 files in Work."}},
            {"line": 15, "step": {"type": "complete", "output": {"text": "The helper counted 2 files in Work."}}},
        ],
        "outcome": {"type": "complete", "output": {"text": "The helper counted 2 files in Work."}, "line": 15},
        "ignored": {"irrelevant": 4, "other_session": 7},
    });
    let mut learned = DeepSeekLiveReader::default();
    assert_eq!(stream("other_session_and_subagent.jsonl", &mut learned), expected);
    assert_eq!(learned.session(), Some("ses-main"));
    assert_eq!(stream("other_session_and_subagent.jsonl", &mut DeepSeekLiveReader::for_session("ses-main")), expected);
}

#[test]
fn d36_live_an_error_response_to_our_request_fails_the_turn() {
    let expected = json!({
        "steps": [{"line": 2, "step": {"type": "failed", "error": {"code": "harness_request_rejected",
            "message": "Unknown session: ses-missing", "details": {"rpcCode": -32602}}}}],
        "outcome": {"type": "failed", "code": "harness_request_rejected", "message": "Unknown session: ses-missing", "retryable": false, "line": 2},
        "ignored": {"irrelevant": 1, "after_terminal": 1},
    });
    assert_eq!(stream("error_response.jsonl", &mut DeepSeekLiveReader::default()), expected);
    let ours = DeepSeekLiveReader::for_session("ses-missing").with_request_ids([json!(1), json!(2)]);
    assert_eq!(stream("error_response.jsonl", &mut { ours }), expected);
    let theirs = DeepSeekLiveReader::default().with_request_ids([json!(1), json!("prompt-1")]);
    assert_eq!(
        stream("error_response.jsonl", &mut { theirs }),
        json!({"steps": [], "outcome": {"type": "no_outcome"}, "ignored": {"irrelevant": 3}})
    );
}

#[test]
fn d36_live_max_tokens_is_recorded_but_completes_the_turn() {
    assert_eq!(
        stream("max_tokens.jsonl", &mut DeepSeekLiveReader::default()),
        json!({
            "steps": [
                {"line": 3, "step": {"type": "message", "text": "The summary, first half: the plan has three phases"}},
                {"line": 6, "step": {"type": "message", "text": "and ends with a review."}},
                {"line": 7, "step": {"type": "complete", "output": {"text": "and ends with a review."}, "metadata": {"turnEndKind": "max-tokens"}}},
            ],
            "outcome": {"type": "complete", "output": {"text": "and ends with a review."}, "line": 7},
            "ignored": {"irrelevant": 4},
        })
    );
}

#[test]
fn d36_live_a_failing_turn_end_fails_the_turn() {
    assert_eq!(
        stream("turn_error.jsonl", &mut DeepSeekLiveReader::default()),
        json!({
            "steps": [{"line": 4, "step": {"type": "failed", "error": {"code": "provider_unavailable",
                "message": "upstream returned 503", "retryable": true}}}],
            "outcome": {"type": "failed", "code": "provider_unavailable", "message": "upstream returned 503", "retryable": true, "line": 4},
            "ignored": {"blank": 1, "irrelevant": 2},
        })
    );
}

#[test]
fn d35_live_a_truncated_last_line_is_counted_and_gives_no_outcome() {
    assert_eq!(
        stream("truncated_last_line.jsonl", &mut DeepSeekLiveReader::default()),
        json!({
            "steps": [
                {"line": 2, "step": {"type": "message", "text": "Reading the plan."}},
                {"line": 3, "step": {"type": "tool_call", "callId": "call-9", "tool": "files.read",
                    "arguments": {"path": ["Work", "plan.md"]}}, "origin": "ran_by_cli"},
            ],
            "outcome": {"type": "no_outcome"},
            "ignored": {"irrelevant": 1, "not_json": 1},
        })
    );
}

#[test]
fn d36_live_a_visible_session_prompt_names_our_session() {
    let frames = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"cwd": "/w", "provider": "p", "model": "m"}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "mine", "contentBlocks": []}}),
        wrapped("earlier", "turn/end", json!({"reason": {"kind": "completed"}})),
        json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -1, "message": "not ours"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "earlier", "contentBlocks": []}}),
        wrapped("mine", "assistant/message", json!({"message": {"content": [{"type": "text", "text": "Hello."}]}})),
        wrapped("mine", "turn/end", json!({"reason": {"kind": "interrupted"}})),
    ];
    let mut reader = DeepSeekLiveReader::default();
    let reading = lines(&mut reader, &frames);
    assert_eq!(reader.session(), Some("mine"));
    assert_eq!(
        reading["outcome"],
        json!({"type": "failed", "code": "harness_turn_interrupted",
            "message": "The DeepSeek Harness turn was interrupted and did not finish.", "retryable": true, "line": 7})
    );
    assert_eq!(reading["ignored"], json!({"irrelevant": 3, "other_session": 2}));
}

#[test]
fn d36_live_an_announced_child_is_never_taken_for_our_session() {
    let frames = [
        json!({"jsonrpc": "2.0", "method": "subagent.started", "params": {"parentSessionId": "p", "childSessionId": "kid"}}),
        wrapped("kid", "turn/end", json!({"reason": {"kind": "completed"}})),
        json!({"jsonrpc": "2.0", "method": "session.status", "params": {"sessionId": "kid", "status": "idle"}}),
        wrapped("p", "turn/end", json!({"reason": {"kind": "completed"}})),
    ];
    let mut reader = DeepSeekLiveReader::default();
    let reading = lines(&mut reader, &frames);
    assert_eq!(reader.session(), Some("p"));
    assert_eq!(reading["outcome"], json!({"type": "complete", "output": {"text": ""}, "line": 4}));
    assert_eq!(reading["ignored"], json!({"irrelevant": 1, "other_session": 2}));
}

#[test]
fn d35_live_unparseable_arguments_are_malformed_not_a_failure() {
    let frames = [
        event("tool/call", json!({"callId": "c1", "name": "files.read", "arguments": "[1]"})),
        event("tool/call", json!({"callId": "c2", "name": "files.read"})),
        json!({"type": "turn/end", "data": {"reason": {"kind": "completed"}}}),
        json!({"jsonrpc": "2.0", "method": "session.event", "params": {"sessionId": "s1"}}),
    ];
    let reading = lines(&mut DeepSeekLiveReader::default(), &frames);
    assert_eq!(reading["steps"], json!([{"line": 3, "step": {"type": "complete", "output": {"text": ""}}}]));
    assert_eq!(reading["ignored"], json!({"malformed": 2, "after_terminal": 1}));
}

// ---- Properties -----------------------------------------------------------

const KEYS: &[&str] = &[
    "type",
    "data",
    "event",
    "params",
    "method",
    "sessionId",
    "id",
    "error",
    "result",
    "message",
    "content",
    "text",
    "callId",
    "name",
    "arguments",
    "reason",
    "kind",
    "code",
    "childSessionId",
    "role",
    "jsonrpc",
];
const WORDS: &[&str] = &[
    "session.event",
    "session.status",
    "subagent.started",
    "session/prompt",
    "tool/call",
    "assistant/message",
    "turn/end",
    "turn/start",
    "text",
    "tool-call",
    "completed",
    "max-tokens",
    "aborted",
    "error",
    "s1",
    "{}",
    "[1]",
];

fn json_value() -> impl Strategy<Value = Value> {
    arbitrary::worded_json(KEYS, WORDS)
}

fn argument_value() -> impl Strategy<Value = Value> {
    arbitrary::argument_value(false)
}

proptest! {
    #[test]
    fn d35_arbitrary_json_never_panics(values in prop::collection::vec(json_value(), 0..12)) {
        let mut reader = DeepSeekLiveReader::default();
        for (index, value) in values.iter().enumerate() {
            if let Value::Object(map) = value {
                let _ = DeepSeekProtocol.interpret(map);
            }
            let wrapped = wrapped("s1", "tool/call", value.clone());
            let _ = DeepSeekProtocol.interpret(&object(wrapped.clone()));
            let _ = reader.read_line(index * 2 + 1, &value.to_string());
            let _ = reader.read_line(index * 2 + 2, &wrapped.to_string());
        }
        let _ = reader.outcome();
    }

    #[test]
    fn d35_arbitrary_text_never_panics(text in any::<String>()) {
        let _ = read_stream(&mut DeepSeekLiveReader::default(), &text);
        let _ = read_stream(&mut DeepSeekLiveReader::for_session("s1"), &format!("{text}\n{text}"));
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
