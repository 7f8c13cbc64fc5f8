//! Mediation of tool calls and the ceilings: E15–E29.

use crate::support;

use serde_json::{json, Value};
use sharedos_envelope::error::HostError;
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_envelope::runtime::complete;
use sharedos_model::execution::{ExecutionOptions, ExecutionResult, ExecutionStatus, RuntimeEvent};
use sharedos_model::tool::ToolDefinition;
use sharedos_testkit::call::call;
use sharedos_testkit::events::kinds;
use std::cell::RefCell;
use std::future::pending;
use std::rc::Rc;
use support::*;

fn none() -> ToolInvocationOptions {
    ToolInvocationOptions::none()
}

fn step(n: u64) -> ToolInvocationOptions {
    ToolInvocationOptions::at_step(n)
}

fn tools() -> Vec<ToolDefinition> {
    vec![read_tool("files.read"), write_tool("payments.transfer")]
}

/// Runs `script` and returns the result, the kernel and the codes the runtime saw.
async fn session<F, Fut>(limits: Option<ExecutionOptions>, script: F) -> (ExecutionResult, Rc<FakeKernel>)
where
    F: Fn(RuntimeHost) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<Value, RuntimeFailure>> + 'static,
{
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(move |_r, host, _s| script(host));
    let mut req = request(tools());
    req.options = limits;
    let result = run(&executor(&kernel, &p, options()), req).await;
    (result, kernel)
}

fn code_of(answer: &sharedos_model::tool::ToolResult) -> String {
    answer.error().map_or_else(|| "ok".to_string(), |e| e.code.clone())
}

#[tokio::test(start_paused = true)]
async fn e15_e16_unlisted_tool_is_refused_by_the_envelope_and_audited_not_offered() {
    let (result, kernel) = session(None, |host| async move {
        let answer = host.invoke_tool(call("c1", "payments.wire", json!({})), none()).await?;
        Ok(complete(json!(code_of(&answer))))
    })
    .await;
    assert_eq!(result.output, Some(json!("tool_unavailable")));
    assert_eq!(kernel.op_count("invoke:"), 0);
    assert_eq!(result.events[1].data, json!({"callId": "c1", "tool": "payments.wire"}));
    assert_eq!(
        result.events[2].data,
        json!({"callId": "c1", "status": "denied", "tool": "payments.wire", "code": "tool_unavailable"})
    );
    let invoked = kernel.trail("tool.invoked");
    assert_eq!(invoked.len(), 1);
    assert_eq!(
        (invoked[0].outcome.as_str(), invoked[0].reason.as_deref(), invoked[0].source, invoked[0].cause.as_deref()),
        ("denied", Some("tool_unavailable"), "envelope", Some("not_offered"))
    );
}

#[tokio::test(start_paused = true)]
async fn e17_the_call_past_the_budget_is_refused_and_the_turn_continues() {
    let limits = ExecutionOptions { max_tool_calls: Some(2), ..ExecutionOptions::default() };
    let (result, kernel) = session(Some(limits), |host| async move {
        let mut codes = vec![];
        for i in 0..3 {
            codes.push(code_of(&host.invoke_tool(call(&format!("c{i}"), "files.read", json!({})), none()).await?));
        }
        Ok(complete(json!(codes)))
    })
    .await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.output, Some(json!(["ok", "ok", "tool_call_limit_exceeded"])));
    assert_eq!(kernel.op_count("invoke:"), 2);
    assert_eq!(kernel.refused.borrow()[0].reason_code, "tool_call_limit_exceeded");
}

#[tokio::test(start_paused = true)]
async fn e18_not_offered_consumes_a_unit_but_draining_and_step_refusals_do_not() {
    let limits = ExecutionOptions { max_tool_calls: Some(2), max_steps: Some(2), ..ExecutionOptions::default() };
    let (result, _) = session(Some(limits), |host| async move {
        let mut codes = vec![];
        codes.push(code_of(&host.invoke_tool(call("a", "files.read", json!({})), step(5)).await?));
        codes.push(code_of(&host.invoke_tool(call("b", "payments.wire", json!({})), none()).await?));
        codes.push(code_of(&host.invoke_tool(call("c", "files.read", json!({})), none()).await?));
        codes.push(code_of(&host.invoke_tool(call("d", "files.read", json!({})), none()).await?));
        Ok(complete(json!(codes)))
    })
    .await;
    assert_eq!(
        result.output,
        Some(json!(["step_limit_exceeded", "tool_unavailable", "ok", "tool_call_limit_exceeded"]))
    );
}

#[tokio::test(start_paused = true)]
async fn e19_a_step_at_or_past_max_steps_is_refused_with_the_step_echoed() {
    let limits = ExecutionOptions { max_steps: Some(3), ..ExecutionOptions::default() };
    let (result, _) = session(Some(limits), |host| async move {
        let refused = host.invoke_tool(call("c1", "files.read", json!({})), step(3)).await?;
        let allowed = host.invoke_tool(call("c2", "files.read", json!({})), step(2)).await?;
        Ok(complete(json!([code_of(&refused), code_of(&allowed)])))
    })
    .await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.output, Some(json!(["step_limit_exceeded", "ok"])));
    assert_eq!(result.events[1].data["step"], 3);
    assert_eq!(
        result.events[2].data,
        json!({"callId": "c1", "status": "denied", "tool": "files.read", "step": 3, "code": "step_limit_exceeded"})
    );
}

#[tokio::test(start_paused = true)]
async fn e20_e21_distinct_steps_are_budgeted_repeats_and_undeclared_are_not() {
    let limits = ExecutionOptions { max_steps: Some(2), max_tool_calls: Some(100), ..ExecutionOptions::default() };
    let (result, _) = session(Some(limits), |host| async move {
        let mut codes = vec![];
        for (id, s) in [("a", Some(0)), ("b", Some(1)), ("c", Some(0)), ("d", Some(1))] {
            let o = s.map_or_else(none, step);
            codes.push(code_of(&host.invoke_tool(call(id, "files.read", json!({})), o).await?));
        }
        codes.push(code_of(&host.invoke_tool(call("e", "files.read", json!({})), step(1)).await?));
        for i in 0..5 {
            codes.push(code_of(&host.invoke_tool(call(&format!("n{i}"), "files.read", json!({})), none()).await?));
        }
        Ok(complete(json!(codes)))
    })
    .await;
    let codes: Vec<String> = serde_json::from_value(result.output.unwrap()).unwrap();
    assert!(codes.iter().all(|c| c == "ok"), "{codes:?}");
    let (result, _) = session(
        Some(ExecutionOptions { max_steps: Some(3), max_tool_calls: Some(100), ..ExecutionOptions::default() }),
        |host| async move {
            let mut codes = vec![];
            for (id, s) in [("a", 0), ("b", 2), ("c", 1), ("d", 0)] {
                codes.push(code_of(&host.invoke_tool(call(id, "files.read", json!({})), step(s)).await?));
            }
            Ok(complete(json!(codes)))
        },
    )
    .await;
    assert_eq!(result.output, Some(json!(["ok", "ok", "ok", "ok"])));
    let (result, _) = session(
        Some(ExecutionOptions { max_steps: Some(4), max_tool_calls: Some(100), ..ExecutionOptions::default() }),
        |host| async move {
            let mut codes = vec![];
            for (id, s) in [("a", 0), ("b", 3), ("c", 2), ("d", 1), ("e", 1)] {
                codes.push(code_of(&host.invoke_tool(call(id, "files.read", json!({})), step(s)).await?));
            }
            Ok(complete(json!(codes)))
        },
    )
    .await;
    assert_eq!(result.output, Some(json!(["ok", "ok", "ok", "ok", "ok"])));
}

#[tokio::test(start_paused = true)]
async fn e20_a_new_step_past_the_distinct_budget_is_refused() {
    let limits = ExecutionOptions { max_steps: Some(2), max_tool_calls: Some(100), ..ExecutionOptions::default() };
    let (result, _) = session(Some(limits), |host| async move {
        let mut codes = vec![];
        // Steps 1 and 0 fill the budget of two distinct steps; 1 repeats; 2 is new.
        codes.push(code_of(&host.invoke_tool(call("a", "files.read", json!({})), step(1)).await?));
        codes.push(code_of(&host.invoke_tool(call("b", "files.read", json!({})), step(0)).await?));
        codes.push(code_of(&host.invoke_tool(call("c", "files.read", json!({})), step(1)).await?));
        codes.push(code_of(&host.invoke_tool(call("d", "files.read", json!({})), step(2)).await?));
        Ok(complete(json!(codes)))
    })
    .await;
    assert_eq!(result.output, Some(json!(["ok", "ok", "ok", "step_limit_exceeded"])));
}

#[tokio::test(start_paused = true)]
async fn e22_malformed_step_or_call_rejects_with_no_event() {
    let (result, kernel) = session(None, |host| async move {
        let mut errors = vec![];
        for s in [-1.0, 1.5, f64::NAN, f64::INFINITY] {
            errors.push(
                host.invoke_tool(call("c1", "files.read", json!({})), ToolInvocationOptions { step: Some(s) })
                    .await
                    .unwrap_err(),
            );
        }
        let mut bad = call("c2", "files.read", json!({}));
        bad.id = String::new();
        errors.push(host.invoke_tool(bad, none()).await.unwrap_err());
        let mut bad = call("c3", "files.read", json!({}));
        bad.requested_at = "yesterday".into();
        errors.push(host.invoke_tool(bad, none()).await.unwrap_err());
        assert!(errors[..4].iter().all(|e| matches!(e, HostError::InvalidStep)));
        assert!(errors[4..].iter().all(|e| matches!(e, HostError::InvalidCall(_))));
        Ok(complete(Value::Null))
    })
    .await;
    assert_eq!(kinds(&result), vec!["turn.started", "turn.completed"]);
    assert_eq!(kernel.op_count("invoke:"), 0);
}

#[tokio::test(start_paused = true)]
async fn e23_checks_run_in_contract_order() {
    // Draining beats step and call ceilings; step beats call count; call count beats catalogue.
    let limits = ExecutionOptions { max_steps: Some(1), max_tool_calls: Some(1), ..ExecutionOptions::default() };
    let (result, _) = session(Some(limits), |host| async move {
        let mut codes = vec![];
        codes.push(code_of(&host.invoke_tool(call("a", "payments.wire", json!({})), step(0)).await?));
        codes.push(code_of(&host.invoke_tool(call("b", "payments.wire", json!({})), step(0)).await?));
        codes.push(code_of(&host.invoke_tool(call("c", "payments.wire", json!({})), step(4)).await?));
        Ok(complete(json!(codes)))
    })
    .await;
    assert_eq!(result.output, Some(json!(["tool_unavailable", "tool_call_limit_exceeded", "step_limit_exceeded"])));
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(119_000).await;
        let answer = host.invoke_tool(call("z", "payments.wire", json!({})), step(99)).await?;
        Err(RuntimeFailure::message(code_of(&answer)))
    });
    let mut req = request(tools());
    req.options = Some(ExecutionOptions { max_steps: Some(1), max_tool_calls: Some(1), ..ExecutionOptions::default() });
    let result = run(&executor(&kernel, &p, grace(5_000)), req).await;
    assert_eq!(kernel.refused.borrow()[0].reason_code, "turn_draining");
    assert_eq!(kinds(&result), vec!["turn.started", "tool.requested", "tool.completed", "turn.cancelled"]);
}

#[tokio::test(start_paused = true)]
async fn e24_an_invalid_kernel_result_rejects_without_tool_completed() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("files.read", Handler::answer(Answer::Malformed));
    let p = plugin(|_r, host, _s| async move {
        let error = host.invoke_tool(call("c1", "files.read", json!({})), none()).await.unwrap_err();
        assert!(matches!(error, HostError::InvalidToolResult(_)));
        Ok(complete(Value::Null))
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_eq!(kinds(&result), vec!["turn.started", "tool.requested", "turn.completed"]);
}

#[tokio::test(start_paused = true)]
async fn e25_after_close_invoke_and_emit_throw_but_annotate_does_not() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, _h, _s| async move { Ok(complete(json!("done"))) });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    let host = p.hosts.borrow()[0].clone();
    assert!(matches!(host.invoke_tool(call("c9", "files.read", json!({})), none()).await, Err(HostError::Closed)));
    assert!(matches!(host.emit(RuntimeEvent { kind: "late".into(), data: Value::Null }), Err(HostError::Closed)));
    assert!(host.annotate("late", json!(1)).is_ok());
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(kernel.op_count("invoke:"), 0);
}

#[tokio::test(start_paused = true)]
async fn e26_after_the_hard_signal_a_new_call_rejects_closed_not_draining() {
    let kernel = FakeKernel::with_tools(tools());
    let seen: Rc<RefCell<Option<HostError>>> = Rc::default();
    let sink = seen.clone();
    let p = plugin(move |_r, host, signal| {
        let sink = sink.clone();
        async move {
            let keep = host.clone();
            signal.aborted().await;
            *sink.borrow_mut() = keep.invoke_tool(call("late", "files.read", json!({})), none()).await.err();
            pending::<Result<Value, RuntimeFailure>>().await
        }
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    let host = p.hosts.borrow()[0].clone();
    assert!(matches!(host.invoke_tool(call("x", "files.read", json!({})), none()).await, Err(HostError::Closed)));
    assert!(kernel.refused.borrow().is_empty(), "no turn_draining refusal was built");
}

#[tokio::test(start_paused = true)]
async fn e27_tool_completed_code_is_present_exactly_when_not_succeeded() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::answer(Answer::Fail("tool_execution_failed")));
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "files.read", json!({})), none()).await?;
        host.invoke_tool(call("c2", "payments.transfer", json!({})), none()).await?;
        host.invoke_tool(call("c3", "payments.wire", json!({})), none()).await?;
        Ok(complete(Value::Null))
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    for event in result.events.iter().filter(|e| e.kind == "tool.completed") {
        let succeeded = event.data["status"] == "succeeded";
        assert_eq!(event.data.get("code").is_some(), !succeeded, "{event:?}");
    }
    assert_eq!(result.events.iter().filter(|e| e.kind == "tool.completed").count(), 3);
}

#[tokio::test(start_paused = true)]
async fn e28_e29_runtime_events_are_wrapped_and_malformed_ones_throw() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        host.emit(RuntimeEvent { kind: "turn.completed".into(), data: json!({"n": 1}) })?;
        let bad = host.emit(RuntimeEvent { kind: String::new(), data: Value::Null });
        assert!(matches!(bad, Err(HostError::InvalidEvent(_))));
        let padded = host.emit(RuntimeEvent { kind: " x".into(), data: Value::Null });
        assert!(matches!(padded, Err(HostError::InvalidEvent(_))));
        Ok(complete(Value::Null))
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_eq!(kinds(&result), vec!["turn.started", "runtime.event", "turn.completed"]);
    assert_eq!(
        result.events[1].data,
        json!({"runtime": {"id": "scripted", "version": "0.1.0", "protocolVersion": "1"}, "type": "turn.completed", "data": {"n": 1}})
    );
}
