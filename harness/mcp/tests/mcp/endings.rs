//! How an MCP turn ends (D49) and how a tool result is written back (D54).

use crate::support::{completed, run, runtime, ScriptHarness};
use futures::FutureExt;
use serde_json::{json, Value};
use sharedos_drivers::child_process::ProcessLimits;
use sharedos_drivers::live::{read_stream_from, LiveOutcome};
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_mcp::call_result::to_call_tool_result;
use sharedos_mcp::ending::harness_outcome;
use sharedos_mcp::harness::HarnessExit;
use sharedos_model::execution::{ExecutionOptions, ExecutionStatus};
use sharedos_model::tool::{ProtocolError, ToolDefinition, ToolOutcome};
use sharedos_testkit::result::result;
use sharedos_testkit::world::World;
use std::rc::Rc;
use std::sync::Arc;

fn outcome(code: i32, stdout: &[&str]) -> Value {
    let exit = HarnessExit::Exited { code, stdout: stdout.iter().map(|l| l.to_string()).collect() };
    harness_outcome(Vendor::ClaudeCode, &exit)
}

const FAILED: &str = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"gave up"}"#;
const PROSE: &str = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"hello"}]}}"#;
const TOOL_USE: &str = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__sharedos__files_read","input":{}}]}}"#;

#[test]
fn d49_the_first_terminal_frame_wins_whatever_the_exit_code() {
    let first_fails = outcome(0, &[FAILED, &completed()]);
    assert_eq!(first_fails["type"], json!("fail"));
    assert_eq!(first_fails["error"]["code"], json!("error_during_execution"));
    let first_completes = outcome(3, &[&completed(), FAILED]);
    assert_eq!(first_completes["type"], json!("complete"));
}

#[test]
fn d49_without_an_ending_a_clean_exit_completes_with_the_prose_and_any_other_fails() {
    let clean = outcome(0, &[PROSE, "not json at all", PROSE]);
    assert_eq!(clean, json!({"type": "complete", "output": {"text": "hello\nhello"}}));
    let silent = outcome(0, &[]);
    assert_eq!(silent["output"], json!({"text": ""}), "an empty text still completes");
    let crashed = outcome(2, &[PROSE]);
    assert_eq!(crashed["error"]["code"], json!("harness_exited_without_outcome"));
    assert_eq!(
        crashed["error"]["message"],
        json!("The claude-code CLI exited with code 2 without completing the turn.")
    );
    let never = harness_outcome(Vendor::ClaudeCode, &HarnessExit::NotStarted { detail: "x".into() });
    assert_eq!(never["error"]["code"], json!("harness_not_started"));
}

#[test]
fn d49_tool_calls_seen_on_stdout_are_ignored() {
    assert_eq!(outcome(0, &[TOOL_USE, &completed()])["type"], json!("complete"));
    assert_eq!(outcome(0, &[TOOL_USE])["output"], json!({"text": ""}));
}

/// Every stream committed under the drivers' `tests/streams/<vendor>/`, the
/// real CLIs' captures included, with its vendor.
fn committed_streams() -> Vec<(Vendor, std::path::PathBuf)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../drivers/tests/streams");
    let mut streams = Vec::new();
    for vendor in Vendor::ALL {
        let mut folders = vec![root.join(vendor.id())];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                    streams.push((vendor, path));
                }
            }
        }
    }
    streams.sort();
    streams
}

/// One reader (D49): the ending a live seat grades from a CLI's stdout (its
/// frames, as the seat receives them) is the outcome `decode` reads from
/// the same bytes, on every committed stream, whichever way the CLI exits.
#[test]
fn d49_live_grading_and_decode_read_every_committed_stream_alike() {
    let streams = committed_streams();
    assert_eq!(streams.len(), 75, "the committed streams");
    for (vendor, path) in &streams {
        let bytes = std::fs::read(path).unwrap();
        let mut reader = vendor.live_reader();
        let decoded = read_stream_from(reader.as_mut(), bytes.as_slice(), ProcessLimits::default().max_line_bytes)
            .unwrap()
            .outcome;
        let frames: Vec<String> = String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Map<String, Value>>(line).ok())
            .map(|frame| Value::Object(frame).to_string())
            .collect();
        for code in [0, 1] {
            let graded = harness_outcome(*vendor, &HarnessExit::Exited { code, stdout: frames.clone() });
            let name = format!("{} (exit {code})", path.display());
            match &decoded {
                LiveOutcome::Complete { output, .. } => {
                    assert_eq!(graded, json!({"type": "complete", "output": output}), "{name}");
                }
                LiveOutcome::Failed { code, message, retryable, .. } => {
                    assert_eq!(graded["type"], json!("fail"), "{name}");
                    assert_eq!(graded["error"]["code"], json!(code), "{name}");
                    assert_eq!(graded["error"]["message"], json!(message), "{name}");
                    assert_eq!(graded["error"]["retryable"] == json!(true), *retryable, "{name}");
                }
                LiveOutcome::NoOutcome if code == 0 => assert_eq!(graded["type"], json!("complete"), "{name}"),
                LiveOutcome::NoOutcome => {
                    assert_eq!(graded["error"]["code"], json!("harness_exited_without_outcome"), "{name}");
                }
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn d49_a_harness_that_never_exits_is_stopped_at_the_deadline_and_the_turn_ends_cancelled() {
    let world = World::baseline();
    let seat = ScriptHarness::in_memory(Rc::new(|_client| std::future::pending().boxed_local()));
    let mut request = world.request(None);
    request.options = Some(ExecutionOptions { max_steps: None, max_tool_calls: None, timeout_ms: Some(1000) });
    let result = run(&world, runtime(seat), request).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert_eq!(result.error.as_ref().map(|e| e.code.as_str()), Some("turn_cancelled"));
}

fn tool(output_schema: bool) -> ToolDefinition {
    let mut tool: ToolDefinition = World::baseline().requested_tools[0].clone();
    tool.output_schema = output_schema.then(|| Arc::new(serde_json::Map::new()));
    tool
}

#[test]
fn d54_a_success_is_its_text_and_structured_content_only_for_an_object_under_an_output_schema() {
    let text =
        to_call_tool_result(&result("c", "t", ToolOutcome::Succeeded { output: json!("plain") }), Some(&tool(true)));
    let text = serde_json::to_value(text).unwrap();
    assert_eq!(text["content"], json!([{"type": "text", "text": "plain"}]));
    assert_eq!(text.get("structuredContent"), None);
    assert_eq!(text["isError"], json!(false));
    let object = ToolOutcome::Succeeded { output: json!({"a": 1}) };
    let with = serde_json::to_value(to_call_tool_result(&result("c", "t", object.clone()), Some(&tool(true)))).unwrap();
    assert_eq!(with["content"][0]["text"], json!(r#"{"a":1}"#));
    assert_eq!(with["structuredContent"], json!({"a": 1}));
    let without = serde_json::to_value(to_call_tool_result(&result("c", "t", object), Some(&tool(false)))).unwrap();
    assert_eq!(without.get("structuredContent"), None);
}

#[test]
fn d53_every_call_result_says_it_is_of_epoch_2() {
    let success = to_call_tool_result(&result("c", "t", ToolOutcome::Succeeded { output: json!("x") }), None);
    let refusal = ToolOutcome::Denied { error: ProtocolError::new("tool_unavailable", "no") };
    let refusal = to_call_tool_result(&result("c", "t", refusal), None);
    for answer in [success, refusal] {
        assert_eq!(serde_json::to_value(answer).unwrap()["_meta"]["sharedos/protocolVersion"], json!("2"));
    }
}

#[test]
fn d54_a_refusal_is_the_flat_json_of_its_status_code_message_and_retryable() {
    let mut error = ProtocolError::new("tool_unavailable", "no");
    error.retryable = Some(false);
    let refused = to_call_tool_result(&result("c", "t", ToolOutcome::Denied { error }), None);
    let refused = serde_json::to_value(refused).unwrap();
    let body: Value = serde_json::from_str(refused["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body, json!({"status": "denied", "code": "tool_unavailable", "message": "no", "retryable": false}));
    assert_eq!(refused["isError"], json!(true));
    assert_eq!(
        refused["_meta"],
        json!({"sharedos/status": "denied", "sharedos/code": "tool_unavailable", "sharedos/protocolVersion": "2"})
    );
    let failed =
        to_call_tool_result(&result("c", "t", ToolOutcome::Failed { error: ProtocolError::new("boom", "m") }), None);
    let failed = serde_json::to_value(failed).unwrap();
    assert_eq!(failed["_meta"]["sharedos/status"], json!("failed"));
    let body: Value = serde_json::from_str(failed["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body.get("retryable"), None);
}
