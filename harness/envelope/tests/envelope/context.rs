//! Turn-context validation, admission, and the runtime-visible request: E5–E7, E9–E14, E56.

use crate::support;

use serde_json::{json, Value};
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions};
use sharedos_envelope::runtime::complete;
use sharedos_model::access::Reach;
use sharedos_model::address::Address;
use sharedos_model::capability::Capability;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{ExecutionOptions, ExecutionStatus, RuntimeLimits};
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::call::call;
use sharedos_testkit::events::kinds;
use std::cell::RefCell;
use std::rc::Rc;
use support::*;

fn completing() -> Rc<ScriptedPlugin> {
    plugin(|_r, _h, _s| async move { Ok(complete(json!("ok"))) })
}

#[tokio::test(start_paused = true)]
async fn e5_actor_mismatch_is_denied_with_one_event_and_only_turn_end() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = completing();
    let mut req = request(vec![]);
    req.context.actor = Address::agent("agent-other");
    let result = run(&executor(&kernel, &p, options()), req).await;
    assert_eq!(result.status, ExecutionStatus::Denied);
    assert_eq!(result.code(), Some("actor_mismatch"));
    assert_eq!(result.error.as_ref().unwrap().retryable, None);
    assert_eq!(kinds(&result), vec!["turn.denied"]);
    assert_eq!(result.events[0].data, json!({"code": "actor_mismatch"}));
    assert_eq!(*kernel.ops.borrow(), vec!["turn_end"]);
    assert_eq!(p.runs.get(), 0);
}

#[tokio::test(start_paused = true)]
async fn e6_receiver_then_trace_or_purpose_mismatch_in_order() {
    let kernel = FakeKernel::with_tools(vec![]);
    let exec = executor(&kernel, &completing(), options());
    let mut both = request(vec![]);
    both.context.actor = Address::agent("x");
    both.message.receiver = Address::agent("y");
    assert_eq!(run(&exec, both).await.code(), Some("actor_mismatch"));
    let mut receiver = request(vec![]);
    receiver.message.receiver = Address::agent("y");
    receiver.message.trace_id = "trace-other".into();
    assert_eq!(run(&exec, receiver).await.code(), Some("receiver_mismatch"));
    let mut trace = request(vec![]);
    trace.message.trace_id = "trace-other".into();
    assert_eq!(run(&exec, trace).await.code(), Some("message_context_mismatch"));
    let mut purpose = request(vec![]);
    purpose.message.purpose = "another purpose".into();
    assert_eq!(run(&exec, purpose).await.code(), Some("message_context_mismatch"));
    assert_eq!(kernel.op_count("admit"), 0);
}

#[tokio::test(start_paused = true)]
async fn e7_admission_refusal_is_denied_with_the_kernels_code_and_run_not_called() {
    let kernel = FakeKernel::with_tools(vec![]);
    kernel.refuse_admission.replace(Some(ReasonCode::GrantExhausted));
    let p = completing();
    let result = run(&executor(&kernel, &p, options()), request(vec![])).await;
    assert_eq!(result.status, ExecutionStatus::Denied);
    assert_eq!(result.code(), Some("grant_exhausted"));
    assert_eq!(kinds(&result), vec!["turn.denied"]);
    assert_eq!(result.events[0].data, json!({"code": "grant_exhausted"}));
    assert_eq!(p.runs.get(), 0);
    assert_eq!(kernel.scope_closes.get(), 1, "the lease is released");
}

#[tokio::test(start_paused = true)]
async fn e9_the_runtime_context_has_no_authority_and_no_enabled_namespaces() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = completing();
    let _ = run(&executor(&kernel, &p, options()), request(vec![])).await;
    let seen = serde_json::to_value(&*p.seen.borrow()[0]).unwrap();
    let mut keys: Vec<&str> = seen["context"].as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, vec!["actor", "namespaceId", "now", "owner", "purpose", "reach", "traceId"]);
    assert_eq!(seen["context"]["now"], "2026-01-01T00:00:00.000Z", "the envelope's clock, not the host's");
}

#[tokio::test(start_paused = true)]
async fn e10_e11_tools_are_kernel_listed_and_requested_in_kernel_order() {
    let kernel =
        FakeKernel::with_tools(vec![read_tool("files.b"), write_tool("files.unrequested"), read_tool("files.a")]);
    let p = completing();
    let mut kernel_b = read_tool("files.b");
    kernel_b.description = "kernel's own definition".into();
    kernel.catalogue.borrow_mut()[0] = kernel_b.clone();
    let req = request(vec![read_tool("files.a"), read_tool("files.b"), read_tool("files.unlisted")]);
    let result = run(&executor(&kernel, &p, options()), req).await;
    let seen = p.seen.borrow()[0].clone();
    let names: Vec<&str> = seen.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["files.b", "files.a"]);
    assert_eq!(*seen.tools[0], kernel_b);
    assert_eq!(result.events[0].kind, "turn.started");
    assert_eq!(result.events[0].data["visibleTools"], json!(["files.b", "files.a"]));
    assert_eq!(result.events[0].data["runtime"], json!({"id": "scripted", "version": "0.1.0", "protocolVersion": "1"}));
}

#[tokio::test(start_paused = true)]
async fn e12_computed_reach_is_narrowed_and_unavailable_reach_passes_through() {
    let kernel = FakeKernel::with_tools(vec![read_tool("files.read")]);
    let entry = |value: Value| serde_json::from_value::<Capability>(value).unwrap();
    let on_catalogue = entry(
        json!({"resource": {"namespace": "files", "path": ["docs", "a"]}, "actions": ["read"], "scope": "exact"}),
    );
    let off_catalogue =
        entry(json!({"resource": {"namespace": "payments", "path": ["docs"]}, "actions": ["write"], "scope": "exact"}));
    kernel.reach.replace(Some(Reach::Computed { reach: vec![on_catalogue.clone(), off_catalogue] }));
    let p = completing();
    let exec = executor(&kernel, &p, options());
    let _ = run(&exec, request(vec![read_tool("files.read")])).await;
    assert_eq!(p.seen.borrow()[0].context.reach, Reach::Computed { reach: vec![on_catalogue] });
    kernel.reach.replace(Some(Reach::Unavailable { reason_code: "authority_unavailable".into() }));
    let _ = run(&exec, request(vec![read_tool("files.read")])).await;
    assert_eq!(p.seen.borrow()[1].context.reach, Reach::Unavailable { reason_code: "authority_unavailable".into() });
}

#[tokio::test(start_paused = true)]
async fn e13_the_runtime_cannot_change_what_the_envelope_holds() {
    // The request is behind an `Rc` (shared, immutable), limits are a copy,
    // and the signals a runtime gets are followers: aborting them stops nothing.
    let kernel = FakeKernel::with_tools(vec![read_tool("files.read")]);
    let p = plugin(|_r, host, signal| async move {
        signal.abort(AbortReason::TurnClosed);
        host.draining().abort(AbortReason::Draining);
        let mut limits = host.limits();
        limits.max_tool_calls = 0;
        assert_eq!(limits.max_tool_calls, 0);
        assert_eq!(host.limits().max_tool_calls, 16);
        let answer = host
            .invoke_tool(call("c1", "files.read", json!({})), sharedos_envelope::host::ToolInvocationOptions::none())
            .await?;
        Ok(complete(json!(answer.status().as_str())))
    });
    let result = run(&executor(&kernel, &p, options()), request(vec![read_tool("files.read")])).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.output, Some(json!("succeeded")));
}

#[tokio::test(start_paused = true)]
async fn e14_limits_resolve_request_first_then_defaults_with_calls_falling_back_to_steps() {
    let kernel = FakeKernel::with_tools(vec![]);
    let seen: Rc<RefCell<Vec<RuntimeLimits>>> = Rc::default();
    let sink = seen.clone();
    let p = plugin(move |_r, host, _s| {
        sink.borrow_mut().push(host.limits());
        async move { Ok(complete(Value::Null)) }
    });
    let _ = run(&executor(&kernel, &p, options()), request(vec![])).await;
    let exec = executor(&kernel, &p, ExecutorOptions { default_max_steps: 7, default_timeout_ms: 9_000, ..options() });
    let _ = run(&exec, request(vec![])).await;
    let exec = executor(&kernel, &p, ExecutorOptions { default_max_tool_calls: Some(3), ..options() });
    let mut req = request(vec![]);
    req.options = Some(ExecutionOptions { max_steps: Some(4), max_tool_calls: None, timeout_ms: Some(50) });
    let _ = run(&exec, req).await;
    let mut req = request(vec![]);
    req.options = Some(ExecutionOptions { max_steps: Some(4), max_tool_calls: Some(9), timeout_ms: None });
    let _ = run(&exec, req).await;
    assert_eq!(
        *seen.borrow(),
        vec![
            RuntimeLimits { max_steps: 16, max_tool_calls: 16, timeout_ms: 120_000 },
            RuntimeLimits { max_steps: 7, max_tool_calls: 7, timeout_ms: 9_000 },
            RuntimeLimits { max_steps: 4, max_tool_calls: 3, timeout_ms: 50 },
            RuntimeLimits { max_steps: 4, max_tool_calls: 9, timeout_ms: 120_000 },
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn e56_pre_aborted_host_signal_runs_nothing_but_turn_end() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = completing();
    let signal = AbortSignal::new();
    signal.abort(AbortReason::HostCancelled);
    let result = executor(&kernel, &p, options())
        .execute(request(vec![]), ExecuteOptions { signal: Some(signal), on_event: None })
        .await
        .unwrap();
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert_eq!(result.code(), Some("turn_cancelled"));
    assert_eq!(result.error.as_ref().unwrap().retryable, Some(true));
    assert!(result.events.is_empty());
    assert_eq!(*kernel.ops.borrow(), vec!["turn_end"]);
    assert_eq!(result.metadata.as_ref().unwrap()["runtime"]["id"], "scripted");
}
