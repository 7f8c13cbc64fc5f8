//! One turn at a time: what the harness is served and told, how its calls
//! are mediated, and what the turn records (D40–D43, D45–D48, D51).

use crate::support::{call, completed, meta, run, runtime, Client, ScriptHarness};
use futures::FutureExt;
use serde_json::{json, Value};
use sharedos_envelope::options::ExecuteOptions;
use sharedos_kernel::listing::catalog_hash;
use sharedos_model::audit::AuditType;
use sharedos_model::execution::ExecutionStatus;
use sharedos_testkit::events::events_of;
use sharedos_testkit::json::object;
use sharedos_testkit::world::{read_policy, World};
use sharedos_world::options::{EscalationMode, WorldOptions};
use std::cell::RefCell;
use std::rc::Rc;

/// A harness running `script`, the values it observed kept in the cell.
fn harness<F, Fut>(seen: &Rc<RefCell<Vec<Value>>>, script: F) -> ScriptHarness
where
    F: Fn(Client, Rc<RefCell<Vec<Value>>>) -> Fut + 'static,
    Fut: std::future::Future<Output = (i32, Vec<String>)> + 'static,
{
    let seen = Rc::clone(seen);
    ScriptHarness::in_memory(Rc::new(move |client| script(client, Rc::clone(&seen)).boxed_local()))
}

fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

#[tokio::test(start_paused = true)]
async fn d40_the_prompt_hash_is_stated_and_initialize_carries_the_instructions_and_list_changed_false() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |client, seen| async move {
        seen.borrow_mut().push(to_json(client.peer_info().unwrap().as_ref()));
        (0, vec![completed()])
    });
    let request = world.request(None);
    let result = run(&world, runtime(seat), request.clone()).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    let info = seen.borrow()[0].clone();
    assert_eq!(info["capabilities"]["tools"]["listChanged"], json!(false));
    assert_eq!(info["serverInfo"]["name"], json!("sharedos"));
    assert_eq!(info["protocolVersion"], json!("2025-06-18"));
    let instructions = info["instructions"].as_str().expect("the seat's instructions are served");
    assert!(instructions.starts_with("This turn can reach (a description, not a grant):"), "{instructions}");
    let hash = meta(&result, "promptHash").expect("promptHash is stated");
    assert_eq!(hash.as_str().map(str::len), Some(64));
}

#[tokio::test(start_paused = true)]
async fn d40_a_harness_that_never_connects_still_leaves_the_prompt_hash() {
    let world = World::baseline();
    struct NeverStarts;
    impl sharedos_mcp::harness::McpHarness for NeverStarts {
        fn id(&self) -> &str {
            "claude-code"
        }
        fn run(
            &self,
            _launch: sharedos_mcp::harness::HarnessLaunch,
        ) -> futures::future::LocalBoxFuture<'_, sharedos_mcp::harness::HarnessExit> {
            Box::pin(async { sharedos_mcp::harness::HarnessExit::NotStarted { detail: "no such file".into() } })
        }
    }
    let result = run(&world, runtime(NeverStarts), world.request(None)).await;
    assert_eq!(result.status, ExecutionStatus::Failed);
    assert_eq!(result.error.as_ref().map(|e| e.code.as_str()), Some("harness_not_started"));
    assert!(meta(&result, "promptHash").is_some());
}

#[tokio::test(start_paused = true)]
async fn d41_tools_list_is_the_turns_catalogue_with_its_hash_and_execution_id() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |client, seen| async move {
        let listed = to_json(&client.list_tools(None).await.unwrap());
        seen.borrow_mut().push(listed);
        (0, vec![completed()])
    });
    let request = world.request(None);
    let result = run(&world, runtime(seat), request.clone()).await;
    let listed = seen.borrow()[0].clone();
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"files.read") && names.contains(&"sharedos.escalate"), "{names:?}");
    let hash = listed["_meta"]["sharedos/catalogHash"].as_str().unwrap().to_string();
    assert!(hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()));
    // Exactly the effective catalogue the envelope made visible, hashed as
    // the kernel hashes a listing.
    let started = &events_of(&result, "turn.started")[0];
    let visible: Vec<&str> = started["visibleTools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let mut served = names.clone();
    served.sort_unstable();
    let mut expected = visible.clone();
    expected.sort_unstable();
    assert_eq!(served, expected);
    let definitions: Vec<_> = world.requested_tools.iter().filter(|t| visible.contains(&t.name.as_str())).collect();
    assert_eq!(catalog_hash(&definitions).unwrap(), hash);
    assert_eq!(listed["_meta"]["sharedos/executionId"], json!(request.execution_id));
    assert_eq!(meta(&result, "catalogHash"), Some(json!(hash)));
    for tool in listed["tools"].as_array().unwrap() {
        assert!(tool.get("requiredCapability").is_none(), "requirements are never published");
        assert!(tool["_meta"]["sharedos/namespace"].is_string());
    }
}

#[tokio::test(start_paused = true)]
async fn d42_a_refused_call_is_a_tool_result_and_an_unpublished_name_is_still_requested() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |client, seen| async move {
        let read = call(&client, "files.read", read_policy()).await;
        let absent = call(&client, "no.such.tool", object(json!({}))).await;
        seen.borrow_mut().extend([to_json(&read), to_json(&absent)]);
        (0, vec![completed()])
    });
    let result = run(&world, runtime(seat), world.request(None)).await;
    let (read, absent) = (seen.borrow()[0].clone(), seen.borrow()[1].clone());
    assert_eq!(read["isError"], json!(false));
    assert_eq!(absent["isError"], json!(true));
    assert_eq!(absent["_meta"]["sharedos/status"], json!("denied"));
    assert_eq!(absent["_meta"]["sharedos/code"], json!("tool_unavailable"));
    let requested = events_of(&result, "tool.requested");
    assert_eq!(requested.len(), 2, "both calls went through the envelope");
    let ids: Vec<&Value> = requested.iter().map(|e| &e["callId"]).collect();
    assert_eq!(ids, [&json!("mcp-call-1"), &json!("mcp-call-2")], "fresh SharedOS ids, never the JSON-RPC ids");
    assert_eq!(events_of(&result, "tool.completed").len(), 2);
}

#[tokio::test(start_paused = true)]
async fn d43_a_portable_name_is_mapped_to_its_tool_and_recorded_as_an_alias() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |client, seen| async move {
        let read = call(&client, "files_read", read_policy()).await;
        seen.borrow_mut().push(to_json(&read));
        (0, vec![completed()])
    });
    let result = run(&world, runtime(seat), world.request(None)).await;
    assert_eq!(seen.borrow()[0]["isError"], json!(false));
    assert_eq!(
        events_of(&result, "tool.requested")[0]["tool"],
        json!("files.read"),
        "the call names the canonical tool"
    );
    assert_eq!(meta(&result, "toolAliases"), Some(json!([{ "alias": "files_read", "tool": "files.read" }])));
}

#[tokio::test(start_paused = true)]
async fn d45_d46_d47_the_ask_is_taken_by_the_latch_and_every_later_call_is_turned_away() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |client, seen| async move {
        let read = call(&client, "files.read", read_policy()).await;
        let ask = call(&client, "sharedos.escalate", object(json!({"reason": "needs a human"}))).await;
        let after = call(&client, "files.read", read_policy()).await;
        seen.borrow_mut().extend([to_json(&read), to_json(&ask), to_json(&after)]);
        (0, vec![completed()])
    });
    let result = run(&world, runtime(seat), world.request(None)).await;
    let (ask, after) = (seen.borrow()[1].clone(), seen.borrow()[2].clone());
    assert_eq!(ask["isError"], json!(false));
    let answer: Value = serde_json::from_str(ask["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer["escalated"], json!(true));
    assert_eq!(answer["reason"], json!("needs a human"));
    assert!(answer["note"].as_str().unwrap().contains("make no further tool calls"));
    assert_eq!(after["isError"], json!(true));
    assert_eq!(after["_meta"]["sharedos/code"], json!("escalation_pending"));
    let body: Value = serde_json::from_str(after["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["retryable"], json!(false));
    assert_eq!(events_of(&result, "tool.requested").len(), 1, "only the call before the ask reached the envelope");
    assert_eq!(result.status, ExecutionStatus::Escalated);
    let escalation = result.escalation.as_ref().expect("an escalation is recorded");
    assert_eq!(escalation.reason, "needs a human");
    assert_eq!(world.fixtures.audit.of_kind(AuditType::EscalationRequested).len(), 1);
    assert_eq!(meta(&result, "callsAfterEscalation"), Some(json!(1)));
    assert_eq!(meta(&result, "harnessOutcome"), Some(json!("complete")));
    assert_eq!(meta(&result, "harnessErrorCode"), None);
    assert_eq!(meta(&result, "escalationAsked"), Some(json!({"tool": "sharedos.escalate", "reason": "needs a human"})));
}

#[tokio::test(start_paused = true)]
async fn d47_an_escalated_turn_records_the_harness_failure_and_its_code() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |client, _| async move {
        call(&client, "sharedos.escalate", object(json!({"reason": "stuck"}))).await;
        (1, Vec::new())
    });
    let result = run(&world, runtime(seat), world.request(None)).await;
    assert_eq!(result.status, ExecutionStatus::Escalated);
    assert_eq!(meta(&result, "harnessOutcome"), Some(json!("fail")));
    assert_eq!(meta(&result, "harnessErrorCode"), Some(json!("harness_exited_without_outcome")));
    assert_eq!(meta(&result, "callsAfterEscalation"), Some(json!(0)));
}

#[tokio::test(start_paused = true)]
async fn d48_without_the_grant_the_ask_is_an_ordinary_refused_call() {
    let options = WorldOptions { escalation: Some(EscalationMode::Withheld), ..WorldOptions::default() };
    let world = World::build(&options, |_| Vec::new());
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |client, seen| async move {
        let ask = call(&client, "sharedos.escalate", object(json!({"reason": "please"}))).await;
        seen.borrow_mut().push(to_json(&ask));
        (0, vec![completed()])
    });
    let result = run(&world, runtime(seat), world.request(None)).await;
    assert_eq!(seen.borrow()[0]["_meta"]["sharedos/code"], json!("tool_unavailable"));
    assert_eq!(events_of(&result, "tool.requested").len(), 1);
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(meta(&result, "escalationAsked"), None);
}

#[tokio::test(start_paused = true)]
async fn d51_the_metadata_says_how_the_harness_was_connected() {
    let world = World::baseline();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, |_, _| async move { (0, vec![completed()]) });
    let plain = run(&world, runtime(seat), world.request(None)).await;
    assert_eq!(meta(&plain, "harness"), Some(json!("claude-code")));
    assert_eq!(meta(&plain, "toolshare"), Some(json!("mcp")));
    assert_eq!(meta(&plain, "mcpServer"), Some(json!("sharedos")));
    assert!(meta(&plain, "catalogHash").is_some());
    assert_eq!(meta(&plain, "toolAliases"), None, "only when a name was rewritten");
    assert_eq!(meta(&plain, "model"), None);
    let seat = harness(&seen, |_, _| async move { (0, vec![completed()]) });
    let declared = sharedos_mcp::runtime::DeclaredModel { id: "m-1".into(), provider: Some("p".into()) };
    let runtime = Rc::new(Rc::try_unwrap(runtime(seat)).unwrap().with_model(declared));
    let modelled = run(&world, runtime, world.request(None)).await;
    assert_eq!(meta(&modelled, "model"), Some(json!("m-1")));
    assert_eq!(meta(&modelled, "modelProvider"), Some(json!("p")));
}

#[tokio::test(start_paused = true)]
async fn an_audit_outage_under_a_call_is_json_rpc_32603_and_the_envelope_ends_the_turn_audit_unavailable() {
    let world = World::baseline();
    let audit = world.fixtures.audit.clone();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seat = harness(&seen, move |client, seen| {
        // The call's authorization decision is the first pre-effect record
        // the sink refuses: nothing runs, and the host rejects the call
        // rather than answering it with a tool result.
        let decided = audit.of_kind(AuditType::AuthorizationChecked).len();
        audit.fail_from_nth(AuditType::AuthorizationChecked, u64::try_from(decided).unwrap() + 1);
        async move {
            let params = rmcp::model::CallToolRequestParams::new("files.read").with_arguments(read_policy());
            let answer = match client.call_tool(params).await {
                Err(rmcp::ServiceError::McpError(error)) => json!({ "error": to_json(&error) }),
                other => json!({ "other": format!("{other:?}") }),
            };
            seen.borrow_mut().push(answer);
            (0, vec![completed()])
        }
    });
    // A drain grace lets the harness read its answer before the envelope
    // stops the turn it has latched as failed.
    let executor = world.executor(runtime(seat), 5_000);
    let result = executor.execute(world.request(None), ExecuteOptions::default()).await.unwrap();
    let answer = seen.borrow()[0].clone();
    assert_eq!(answer["error"]["code"], json!(-32603), "an outage is no refusal: {answer}");
    assert_eq!(result.status, ExecutionStatus::Failed);
    assert_eq!(result.error.as_ref().map(|e| e.code.as_str()), Some("audit_unavailable"));
    assert_eq!(events_of(&result, "tool.completed").len(), 0, "no tool result was recorded for the call");
}
