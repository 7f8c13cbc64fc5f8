//! The scripted model over HTTP, as a CLI's client meets it: each API's
//! replies, the key, the endings' wire forms, and the witness log.

use serde_json::{json, Value};
use sharedos_conformance_metadata::witness::{Answer, WitnessLog};
use sharedos_scripted_model::play::{Play, PlayCall, PlayEnding, FINAL_TEXT};
use sharedos_scripted_model::server::{ModelEndpoint, ModelServer};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn call(tool: &str) -> PlayCall {
    let arguments = json!({ "path": ["Workspace", "policy.md"] }).as_object().cloned().unwrap_or_default();
    PlayCall { tool: tool.to_string(), arguments, at_ms: None, own_tool: false }
}

fn play(ending: PlayEnding) -> Play {
    Play { calls: vec![call("files.read"), call("files.delete")], ending, secrets: Vec::new() }
}

async fn start(play: Play) -> (ModelServer, ModelEndpoint, Arc<Mutex<WitnessLog>>) {
    let log = Arc::new(Mutex::new(WitnessLog::default()));
    let server = ModelServer::start(play, "sharedos", Arc::clone(&log)).await.unwrap();
    let endpoint = server.endpoint();
    (server, endpoint, log)
}

async fn post(endpoint: &ModelEndpoint, path: &str, body: &Value) -> (u16, Result<String, reqwest::Error>) {
    let response = reqwest::Client::new()
        .post(format!("{}{path}", endpoint.base_url))
        .header("x-api-key", &endpoint.key)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await)
}

/// The `data:` payloads of an SSE body.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn claude_request(messages: Value) -> Value {
    json!({ "model": "claude-x", "stream": true, "max_tokens": 100,
            "system": [{ "type": "text", "text": "You are Claude Code." }],
            "tools": [{ "name": "mcp__sharedos__files_read", "input_schema": {} },
                      { "name": "mcp__sharedos__files_list", "input_schema": {} }],
            "messages": messages })
}

#[tokio::test]
async fn messages_api_asks_each_call_by_the_name_the_request_offers_then_says_done() {
    let (server, endpoint, log) = start(play(PlayEnding::Complete { at_ms: None })).await;
    let first = json!([{ "role": "user", "content": "go" }]);
    let (status, body) = post(&endpoint, "/v1/messages?beta=true", &claude_request(first)).await;
    assert_eq!(status, 200);
    let events = events(&body.unwrap());
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    assert_eq!(
        kinds,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(events[1]["content_block"]["name"], "mcp__sharedos__files_read");
    assert_eq!(events[1]["content_block"]["id"], "toolu_sharedos_0");
    assert_eq!(events[4]["delta"]["stop_reason"], "tool_use");
    let arguments: Value = serde_json::from_str(events[2]["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({ "path": ["Workspace", "policy.md"] }));

    // files.delete is not offered: asked for by the served tools' prefix.
    let second = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "toolu_sharedos_0", "name": "mcp__sharedos__files_read", "input": {} }] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "toolu_sharedos_0", "content": [{ "type": "text", "text": "retention: 90 days" }] }] }
    ]);
    let events =
        super::server::events(&post(&endpoint, "/v1/messages", &claude_request(second.clone())).await.1.unwrap());
    assert_eq!(events[1]["content_block"]["name"], "mcp__sharedos__files_delete");

    let mut third = second.as_array().cloned().unwrap();
    third.push(json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": "toolu_sharedos_1", "name": "mcp__sharedos__files_delete", "input": {} }] }));
    third.push(json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "toolu_sharedos_1", "is_error": true, "content": "<tool_use_error>Error: No such tool available: mcp__sharedos__files_delete</tool_use_error>" }] }));
    let events =
        super::server::events(&post(&endpoint, "/v1/messages", &claude_request(json!(third))).await.1.unwrap());
    assert_eq!(events[2]["delta"]["text"], FINAL_TEXT);
    assert_eq!(events[4]["delta"]["stop_reason"], "end_turn");
    server.close().await;

    let log = log.lock().unwrap().clone();
    assert_eq!(log.api, "anthropic-messages");
    assert_eq!(log.exchanges.len(), 3);
    assert_eq!(
        log.exchanges[1].answer,
        Answer::Call {
            index: 1,
            tool: "files.delete".into(),
            name: "mcp__sharedos__files_delete".into(),
            offered: false
        }
    );
    assert_eq!(log.exchanges[2].answer, Answer::Final);
    // Each result is witnessed once, in the request that first carried it.
    assert_eq!(log.exchanges[1].returned.len(), 1);
    assert_eq!(log.exchanges[2].returned.len(), 1);
    let refused = log.returned(1).unwrap();
    assert!(refused.is_error);
    assert!(refused.text.contains("No such tool available"));
    assert_eq!(log.returned(0).unwrap().text, "retention: 90 days");
}

fn codex_request(input: Value) -> Value {
    json!({ "model": "gpt-x", "stream": true, "instructions": "You are Codex.",
            "tools": [{ "type": "namespace", "name": "mcp__sharedos", "description": "",
                        "tools": [{ "type": "function", "name": "files_read", "parameters": {} }] }],
            "input": input })
}

#[tokio::test]
async fn responses_api_asks_a_namespaced_call_and_reads_its_output_back() {
    let (server, endpoint, log) = start(play(PlayEnding::CutShort)).await;
    let first = json!([{ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "go" }] }]);
    let (status, body) = post(&endpoint, "/v1/responses", &codex_request(first)).await;
    assert_eq!(status, 200);
    let events = events(&body.unwrap());
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds, ["response.created", "response.output_item.done", "response.completed"]);
    let item = &events[1]["item"];
    assert_eq!((item["namespace"].as_str(), item["name"].as_str()), (Some("mcp__sharedos"), Some("files_read")));
    assert_eq!(item["call_id"], "call_sharedos_0");

    let later = json!([
        { "type": "function_call", "call_id": "call_sharedos_0", "namespace": "mcp__sharedos", "name": "files_read", "arguments": "{}" },
        { "type": "function_call_output", "call_id": "call_sharedos_0", "output": "retention: 90 days" },
        { "type": "function_call", "call_id": "call_sharedos_1", "namespace": "mcp__sharedos", "name": "files_delete", "arguments": "{}" },
        { "type": "function_call_output", "call_id": "call_sharedos_1", "output": "unsupported call: files_delete" }
    ]);
    let events = super::server::events(&post(&endpoint, "/v1/responses", &codex_request(later)).await.1.unwrap());
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(last["response"]["incomplete_details"]["reason"], "max_output_tokens");
    server.close().await;
    let log = log.lock().unwrap().clone();
    assert_eq!(log.api, "openai-responses");
    assert_eq!(log.exchanges.len(), 2);
    assert_eq!(log.exchanges[1].answer, Answer::CutShort);
    assert_eq!(log.exchanges[1].returned.len(), 2);
    assert_eq!(log.returned(1).unwrap().text, "unsupported call: files_delete");
}

#[tokio::test]
async fn a_request_without_the_turns_key_is_refused_and_witnessed() {
    let (server, endpoint, log) = start(play(PlayEnding::Complete { at_ms: None })).await;
    let wrong = ModelEndpoint { key: "sk-wrong".into(), ..endpoint.clone() };
    let (status, _) = post(&wrong, "/v1/messages", &claude_request(json!([]))).await;
    assert_eq!(status, 401);
    let bearer = reqwest::Client::new()
        .post(format!("{}/v1/responses", endpoint.base_url))
        .header("authorization", format!("bearer {}", endpoint.key))
        .body(codex_request(json!([])).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status().as_u16(), 200, "the scheme is matched case-insensitively");
    let (status, _) = post(&endpoint, "/v2/chat", &json!({})).await;
    assert_eq!(status, 404);
    server.close().await;
    let answers: Vec<Answer> = log.lock().unwrap().exchanges.iter().map(|e| e.answer.clone()).collect();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0], Answer::Unauthorized);
    assert!(matches!(answers[1], Answer::Call { index: 0, .. }));
    assert_eq!(answers[2], Answer::NotFound);
}

#[tokio::test]
async fn a_request_offering_no_tools_is_a_side_request_that_leaves_the_play_where_it_was() {
    let (server, endpoint, log) = start(play(PlayEnding::Complete { at_ms: None })).await;
    let side = json!({ "model": "haiku", "max_tokens": 10, "messages": [{ "role": "user", "content": "a title" }] });
    let events = events(&post(&endpoint, "/v1/messages", &side).await.1.unwrap());
    assert_eq!(events[2]["delta"]["text"], FINAL_TEXT);
    let events = super::server::events(&post(&endpoint, "/v1/messages", &claude_request(json!([]))).await.1.unwrap());
    assert_eq!(events[1]["content_block"]["id"], "toolu_sharedos_0");
    server.close().await;
    let answers: Vec<Answer> = log.lock().unwrap().exchanges.iter().map(|e| e.answer.clone()).collect();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0], Answer::Side);
}

fn ended(ending: PlayEnding) -> Play {
    Play { calls: Vec::new(), ending, secrets: Vec::new() }
}

#[tokio::test]
async fn a_failed_turn_is_the_apis_400_error() {
    let (server, endpoint, _) = start(ended(PlayEnding::Failure)).await;
    let (status, body) = post(&endpoint, "/v1/messages", &claude_request(json!([]))).await;
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body.unwrap()).unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    let (status, body) = post(&endpoint, "/responses", &codex_request(json!([]))).await;
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body.unwrap()).unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");
    server.close().await;
}

#[tokio::test]
async fn a_hang_up_drops_the_stream_mid_message() {
    let (server, endpoint, log) = start(ended(PlayEnding::HangUp)).await;
    let (status, body) = post(&endpoint, "/v1/messages", &claude_request(json!([]))).await;
    assert_eq!(status, 200);
    assert!(body.is_err(), "the body must end unfinished: {body:?}");
    server.close().await;
    assert_eq!(log.lock().unwrap().exchanges[0].answer, Answer::HangUp);
}

#[tokio::test]
async fn a_stall_holds_the_reply_until_the_server_closes_and_nothing_answers_after() {
    let (server, endpoint, log) = start(ended(PlayEnding::Stall)).await;
    let request = {
        let endpoint = endpoint.clone();
        tokio::spawn(async move { post(&endpoint, "/v1/messages", &claude_request(json!([]))).await })
    };
    // The reply is held: the request has not finished after a while.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!request.is_finished());
    server.close().await;
    let (status, body) = tokio::time::timeout(Duration::from_secs(10), request).await.unwrap().unwrap();
    assert_eq!(status, 200);
    assert!(body.is_err(), "closing the server ends the held reply unfinished");
    assert_eq!(log.lock().unwrap().exchanges[0].answer, Answer::Stall);
    let after = reqwest::Client::new().post(format!("{}/v1/messages", endpoint.base_url)).send().await;
    assert!(after.is_err(), "a closed turn's model answers nothing");
}
