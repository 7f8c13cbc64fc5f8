//! The model driver in the standard loop, with scripted replies,
//! against the reference kernel; plus its seat rules (D13, D15) and the
//! chat-completions wire.

use crate::support;

use serde_json::{json, Value};
use sharedos_drivers::decision::{AgentTurnDriver, DriverError};
use sharedos_drivers::model_client::TranscriptModelClient;
use sharedos_drivers::model_driver::{model_manifest, ModelDriver, ModelDriverOptions, DEFAULT_MAX_MALFORMED_CALLS};
use sharedos_drivers::model_wire::{
    chat_completions_body, parse_chat_completions_reply, ModelMessage, ModelReply, ModelRequest, ModelSettings,
    ModelToolCall, ModelUsage,
};
use sharedos_drivers::seat::{prompt_hash, DEFAULT_ESCALATION_REASON};
use sharedos_drivers::standard_loop::{StandardLoop, StandardLoopOptions};
use sharedos_drivers::tool_names::{ToolNameCodec, ToolNameError};
use sharedos_model::execution::{ExecutionResult, ExecutionStatus};
use sharedos_model::tool::ToolDefinition;
use sharedos_port::signal::AbortSignal;
use sharedos_testkit::events::events_of;
use sharedos_testkit::json::object;
use sharedos_world::file_store::FileAction;
use sharedos_world::file_tools::definition;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use support::{ending, meta, World};

const POLICY_ARGS: &str = r#"{"path":["Workspace","policy.md"]}"#;

fn call(id: &str, name: &str, arguments: &str) -> ModelToolCall {
    ModelToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

fn calls(list: Vec<ModelToolCall>) -> ModelReply {
    ModelReply { tool_calls: list, finish_reason: Some("tool_calls".into()), ..ModelReply::default() }
}

fn text(content: &str) -> ModelReply {
    ModelReply { content: content.into(), finish_reason: Some("stop".into()), ..ModelReply::default() }
}

fn options(client: &Rc<TranscriptModelClient>) -> ModelDriverOptions {
    let mut options = ModelDriverOptions::new(model_manifest(), client.clone(), "transcript");
    options.provider = Some("sharedos-conformance".into());
    options
}

async fn run(
    world: &World,
    replies: Vec<ModelReply>,
    edit: impl FnOnce(&mut ModelDriverOptions),
) -> (ExecutionResult, Rc<TranscriptModelClient>) {
    let client = Rc::new(TranscriptModelClient::new(replies));
    let mut driver_options = options(&client);
    edit(&mut driver_options);
    let seated = StandardLoop::new(ModelDriver::new(driver_options), StandardLoopOptions::default()).unwrap();
    (world.run(Rc::new(seated)).await, client)
}

fn tool_named(name: &str) -> ToolDefinition {
    let mut tool = definition(FileAction::Read);
    name.clone_into(&mut tool.name);
    tool
}

#[test]
fn tool_names_map_dots_to_underscores_and_back() {
    let codec = ToolNameCodec::new(&[tool_named("files.read"), tool_named("files.snapshot.create")]).unwrap();
    assert_eq!(codec.encode("files.snapshot.create"), "files_snapshot_create");
    assert_eq!(codec.decode("files_snapshot_create"), "files.snapshot.create");
    assert_eq!(codec.decode("admin_grant_issue"), "admin.grant.issue", "an invented name is decoded best-effort");
}

#[test]
fn tool_names_that_cannot_cross_the_wire_or_collide_are_refused() {
    let bad = ToolNameCodec::new(&[tool_named("files.read:v2")]);
    assert!(matches!(bad, Err(ToolNameError::Unrepresentable { .. })));
    let clash = ToolNameCodec::new(&[tool_named("files.read"), tool_named("files_read")]);
    assert_eq!(
        clash,
        Err(ToolNameError::Collision {
            first: "files.read".into(),
            second: "files_read".into(),
            wire: "files_read".into()
        })
    );
}

#[tokio::test(start_paused = true)]
async fn open_refuses_a_colliding_catalogue() {
    let world = World::baseline();
    let client = Rc::new(TranscriptModelClient::new(vec![]));
    let driver = ModelDriver::new(options(&client));
    let mut request = support_runtime_request(&world);
    request.tools = vec![Arc::new(tool_named("files.read")), Arc::new(tool_named("files_read"))];
    let opened = driver.open(Rc::new(request), AbortSignal::new()).await;
    assert!(matches!(opened, Err(DriverError::ToolName(ToolNameError::Collision { .. }))));
    assert!(client.requests().is_empty(), "the model is asked nothing");
}

fn support_runtime_request(world: &World) -> sharedos_model::execution::RuntimeTurnRequest {
    let request = world.request(None, None);
    sharedos_model::execution::RuntimeTurnRequest {
        version: request.version,
        execution_id: request.execution_id,
        agent: request.agent,
        context: sharedos_model::access::RuntimeVisibleContext {
            actor: request.context.actor,
            owner: request.context.owner,
            namespace_id: request.context.namespace_id,
            purpose: request.context.purpose,
            trace_id: request.context.trace_id,
            now: request.context.now,
            reach: sharedos_model::access::Reach::Computed { reach: vec![] },
        },
        message: request.message,
        tools: request.tools.iter().cloned().map(Arc::new).collect(),
        state: None,
        options: None,
        metadata: None,
    }
}

#[tokio::test(start_paused = true)]
async fn a_scripted_model_reads_then_completes_with_its_text_and_metadata() {
    let world = World::baseline();
    let mut first = calls(vec![call("call-1", "files_read", POLICY_ARGS)]);
    first.model = Some("served-model".into());
    first.usage = Some(ModelUsage { input_tokens: 10, output_tokens: 3 });
    let mut last = text("done");
    last.usage = Some(ModelUsage { input_tokens: 20, output_tokens: 4 });
    let (result, client) = run(&world, vec![first, last], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.output, Some(json!({"text": "done"})));
    assert_eq!(events_of(&result, "tool.completed")[0]["tool"], json!("files.read"));
    assert_eq!(events_of(&result, "tool.completed")[0]["status"], json!("succeeded"));
    let expected = [
        ("model", json!("served-model")),
        ("modelProvider", json!("sharedos-conformance")),
        ("requestedModel", json!("transcript")),
        ("malformedToolCalls", json!(0)),
        ("finishReason", json!("stop")),
        ("inputTokens", json!(30)),
        ("outputTokens", json!(7)),
    ];
    for (key, value) in expected {
        assert_eq!(meta(&result, key), Some(value), "{key}");
    }
    assert_eq!(meta(&result, "modelSettings"), None, "settings are stated only when configured");
    let requests = client.requests();
    assert_eq!(requests.len(), 2);
    let ModelMessage::Tool { tool_call_id, content } = requests[1].messages.last().unwrap() else {
        panic!("no tool message")
    };
    assert_eq!(tool_call_id, "call-1");
    assert_eq!(serde_json::from_str::<Value>(content).unwrap()["status"], json!("succeeded"));
}

#[tokio::test(start_paused = true)]
async fn the_model_is_shown_the_catalogue_in_wire_names_and_the_seat_words() {
    let world = World::baseline();
    let (result, client) = run(&world, vec![text("nothing to do")], |_| {}).await;
    let first: ModelRequest = client.requests()[0].clone();
    let read = first.tools.iter().find(|t| t.name == "files_read").unwrap();
    let source = definition(FileAction::Read);
    assert_eq!((&read.description, &read.parameters), (&source.description, &source.input_schema));
    assert!(first.tools.iter().all(|t| !t.name.contains('.')));
    assert_eq!(first.settings, ModelSettings { max_tokens: 4096, temperature: 0.0 });
    let [ModelMessage::System { content: instructions }, ModelMessage::User { content: prompt }] =
        first.messages.as_slice()
    else {
        panic!("expected a system then a user message: {:?}", first.messages)
    };
    assert_eq!(prompt, "Read the policy file.");
    assert_eq!(meta(&result, "promptHash"), Some(json!(prompt_hash(Some(instructions), prompt).unwrap())));
}

#[tokio::test(start_paused = true)]
async fn pending_calls_are_released_one_per_next_before_the_model_is_asked_again() {
    let world = World::baseline();
    let reply = calls(vec![call("a", "files_read", POLICY_ARGS), call("b", "files_stat", POLICY_ARGS)]);
    let (result, client) = run(&world, vec![reply, text("done")], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    let steps: Vec<(Value, Value)> =
        events_of(&result, "tool.requested").iter().map(|d| (d["callId"].clone(), d["step"].clone())).collect();
    assert_eq!(steps, vec![(json!("a"), json!(0)), (json!("b"), json!(1))]);
    assert_eq!(client.requests().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_spent_script_fails_model_call_failed() {
    let world = World::baseline();
    let (result, _) = run(&world, vec![calls(vec![call("a", "files_read", POLICY_ARGS)])], |_| {}).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("model_call_failed".into()), None));
    assert_eq!(meta(&result, "requestedModel"), Some(json!("transcript")));
}

#[tokio::test(start_paused = true)]
async fn a_reply_cut_at_its_token_budget_fails_truncated_and_releases_nothing() {
    let world = World::baseline();
    let mut reply = calls(vec![call("a", "files_read", POLICY_ARGS)]);
    reply.finish_reason = Some("length".into());
    let (result, _) = run(&world, vec![reply], |_| {}).await;
    assert_eq!(result.code(), Some("model_output_truncated"));
    assert!(events_of(&result, "tool.requested").is_empty());
    assert_eq!(meta(&result, "finishReason"), Some(json!("length")));
}

#[tokio::test(start_paused = true)]
async fn escalation_is_checked_before_malformed_arguments_and_drops_what_is_pending() {
    let world = World::baseline();
    let reply = calls(vec![call("e", "sharedos_escalate", "{not json"), call("a", "files_read", POLICY_ARGS)]);
    let (result, _) = run(&world, vec![reply], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Escalated);
    assert_eq!(result.escalation.as_ref().unwrap().reason, DEFAULT_ESCALATION_REASON);
    assert!(events_of(&result, "tool.requested").is_empty());
    assert_eq!(meta(&result, "malformedToolCalls"), Some(json!(0)));
}

#[tokio::test(start_paused = true)]
async fn malformed_calls_are_refused_to_the_model_up_to_the_limit() {
    let world = World::baseline();
    assert_eq!(DEFAULT_MAX_MALFORMED_CALLS, 8);
    let bad = |n: usize| calls((0..n).map(|i| call(&format!("m{i}"), "files_read", "[1]")).collect());
    let (tolerated, client) = run(&world, vec![bad(8), text("gave up on them")], |_| {}).await;
    assert_eq!(tolerated.status, ExecutionStatus::Succeeded);
    assert_eq!(meta(&tolerated, "malformedToolCalls"), Some(json!(8)));
    assert!(events_of(&tolerated, "tool.requested").is_empty(), "no ToolCall is built for a malformed call");
    let refusals: Vec<Value> = client.requests()[1]
        .messages
        .iter()
        .filter_map(|m| match m {
            ModelMessage::Tool { content, .. } => Some(serde_json::from_str(content).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(refusals.len(), 8);
    assert_eq!(refusals[0]["error"]["code"], json!("invalid_tool_arguments"));
    assert_eq!(refusals[0]["status"], json!("failed"));
    let (exceeded, _) = run(&world, vec![bad(9)], |_| {}).await;
    assert_eq!(exceeded.code(), Some("model_malformed_call_limit_exceeded"));
    assert_eq!(meta(&exceeded, "malformedToolCalls"), Some(json!(9)));
    let (strict, _) = run(&world, vec![bad(2)], |o| o.max_malformed_calls = 1).await;
    assert_eq!(strict.code(), Some("model_malformed_call_limit_exceeded"));
}

#[tokio::test(start_paused = true)]
async fn d13_model_an_unoffered_affordance_is_released_as_an_ordinary_call() {
    let world = World::without_escalation();
    let reply = calls(vec![call("e", "sharedos_escalate", r#"{"reason":"why"}"#)]);
    let (result, _) = run(&world, vec![reply, text("carried on")], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    let completed = events_of(&result, "tool.completed");
    assert_eq!(
        (completed[0]["tool"].clone(), completed[0]["code"].clone()),
        (json!("sharedos.escalate"), json!("tool_unavailable"))
    );
}

#[tokio::test(start_paused = true)]
async fn d15_model_malformed_calls_take_no_release_index() {
    let world = World::baseline();
    let seen: Rc<RefCell<Vec<u64>>> = Rc::default();
    let log = seen.clone();
    let reply = calls(vec![
        call("m", "files_read", "nope"),
        call("a", "files_read", POLICY_ARGS),
        call("b", "files_read", POLICY_ARGS),
    ]);
    let (result, _) = run(&world, vec![reply, text("done")], move |o| {
        o.declare_step = Some(Rc::new(move |index, _| {
            log.borrow_mut().push(index);
            (index == 1).then_some(9)
        }));
    })
    .await;
    assert_eq!(*seen.borrow(), vec![0, 1]);
    let steps: Vec<Value> = events_of(&result, "tool.requested").iter().map(|d| d["step"].clone()).collect();
    assert_eq!(steps, vec![json!(0), json!(9)]);
}

#[tokio::test(start_paused = true)]
async fn configured_settings_reach_the_request_and_the_metadata() {
    let world = World::baseline();
    let settings = ModelSettings { max_tokens: 256, temperature: 0.5 };
    let (result, client) = run(&world, vec![text("ok")], |o| o.settings = Some(settings)).await;
    assert_eq!(client.requests()[0].settings, settings);
    assert_eq!(meta(&result, "modelSettings"), Some(json!({"maxTokens": 256, "temperature": 0.5})));
    assert_eq!(meta(&result, "model"), Some(json!("transcript")), "the configured model when none is served");
}

#[test]
fn chat_completions_requests_describe_tools_as_functions() {
    let request = ModelRequest {
        model: "m".into(),
        messages: vec![
            ModelMessage::User { content: "hi".into() },
            ModelMessage::Assistant { content: String::new(), tool_calls: vec![call("c", "files_read", "{}")] },
            ModelMessage::Tool { tool_call_id: "c".into(), content: "{}".into() },
        ],
        tools: vec![sharedos_drivers::model_wire::ModelTool {
            name: "files_read".into(),
            description: "Read".into(),
            parameters: object(json!({"type": "object"})).into(),
        }],
        settings: ModelSettings::default(),
    };
    assert_eq!(
        chat_completions_body(&request),
        json!({
            "model": "m",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "files_read", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "{}"},
            ],
            "tools": [{"type": "function", "function": {"name": "files_read", "description": "Read", "parameters": {"type": "object"}}}],
            "tool_choice": "auto",
            "max_tokens": 4096,
            "temperature": 0.0,
        })
    );
}

#[test]
fn chat_completions_replies_are_read_from_the_first_choice() {
    let body = json!({
        "model": "gpt-x",
        "choices": [{"message": {"content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "files_read", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    });
    let reply = parse_chat_completions_reply(&body).unwrap();
    assert_eq!(reply.model.as_deref(), Some("gpt-x"));
    assert_eq!(reply.content, "");
    assert_eq!(reply.tool_calls, vec![call("c", "files_read", "{}")]);
    assert_eq!(reply.usage, Some(ModelUsage { input_tokens: 5, output_tokens: 2 }));
    assert!(parse_chat_completions_reply(&json!({"error": {"message": "secret provider text"}})).is_err());
    let broken =
        json!({"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": "x", "arguments": {}}}]}}]});
    assert!(parse_chat_completions_reply(&broken).is_err());
}
