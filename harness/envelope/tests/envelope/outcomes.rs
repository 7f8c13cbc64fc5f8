//! Outcomes, hooks and escalation: E30–E41, E44 (envelope side).

use crate::support;

use serde_json::{json, Map, Value};
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::error::TurnError;
use sharedos_envelope::host::ToolInvocationOptions;
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions};
use sharedos_envelope::runtime::{complete, escalate, fail, with_metadata};
use sharedos_model::audit::{AuditType, Source};
use sharedos_model::execution::{ExecutionEvent, ExecutionStatus};
use sharedos_model::tool::ProtocolError;
use sharedos_model::tool::ToolCall;
use sharedos_port::audit::{AuditEffect, AuditUnavailable};
use sharedos_port::error::KernelError;
use sharedos_testkit::call::{call, TRACE};
use sharedos_testkit::events::kinds;
use std::cell::RefCell;
use std::rc::Rc;
use support::*;

fn meta(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect()
}

#[tokio::test(start_paused = true)]
async fn e30_complete_is_succeeded_with_the_output_and_a_final_turn_completed() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = plugin(|_r, _h, _s| async move { Ok(complete(json!({"answer": 42}))) });
    let result = run(&executor(&kernel, &p, options()), request(vec![])).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.output, Some(json!({"answer": 42})));
    assert_eq!(result.error, None);
    assert_eq!(kinds(&result), vec!["turn.started", "turn.completed"]);
    assert_eq!(result.events[1].data, json!({}));
    assert_eq!(kernel.turn_ends.borrow()[0].status, ExecutionStatus::Succeeded);
    assert_eq!(kernel.turn_ends.borrow()[0].reason_code, None);
}

#[tokio::test(start_paused = true)]
async fn e31_an_unparseable_outcome_is_invalid_without_the_outcomes_metadata() {
    let kernel = FakeKernel::with_tools(vec![]);
    for candidate in [
        json!({"type": "complete"}),
        json!({"type": "complete", "output": 1, "extra": true, "metadata": {"k": 1}}),
        json!({"type": "fail", "error": {"code": "", "message": "m"}}),
        json!("complete"),
    ] {
        let p = plugin(move |_r, _h, _s| {
            let candidate = candidate.clone();
            async move { Ok(candidate) }
        });
        let result = run(&executor(&kernel, &p, options()), request(vec![])).await;
        assert_eq!(result.code(), Some("invalid_runtime_outcome"));
        assert_eq!(result.error.as_ref().unwrap().retryable, None);
        assert_eq!(
            result.events.last().unwrap().data,
            json!({"code": "invalid_runtime_outcome", "source": "envelope"})
        );
        let metadata = result.metadata.unwrap();
        assert!(!metadata.contains_key("k"));
        assert!(metadata.contains_key("runtime"));
    }
}

#[tokio::test(start_paused = true)]
async fn e32_fail_carries_the_plugins_error_and_ends_by_runtime() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = plugin(|_r, _h, _s| async move { Ok(fail(ProtocolError::new("model_refused", "no"))) });
    let result = run(&executor(&kernel, &p, options()), request(vec![])).await;
    assert_eq!(result.status, ExecutionStatus::Failed);
    assert_eq!(result.error, Some(ProtocolError::new("model_refused", "no")));
    assert_eq!(result.events.last().unwrap().data, json!({"code": "model_refused", "source": "runtime"}));
    let end = kernel.turn_ends.borrow()[0].clone();
    assert_eq!(end.ended_by, Some(Source::Runtime));
    assert_eq!(end.reason_code.as_deref(), Some("model_refused"));
}

fn recording_options(errors: &Rc<RefCell<Vec<TurnError>>>) -> ExecutorOptions {
    let sink = errors.clone();
    ExecutorOptions {
        on_turn_error: Some(Rc::new(move |e: &TurnError, who: &sharedos_envelope::options::TurnErrorContext| {
            assert_eq!(who.execution_id, "exec-1");
            sink.borrow_mut().push(e.clone());
        })),
        ..options()
    }
}

#[tokio::test(start_paused = true)]
async fn e33_a_throwing_plugin_is_runtime_failed_and_reported_once() {
    let kernel = FakeKernel::with_tools(vec![]);
    let errors = Rc::new(RefCell::new(vec![]));
    let p = plugin(|_r, _h, _s| async move { Err(RuntimeFailure::message("boom")) });
    let result = run(&executor(&kernel, &p, recording_options(&errors)), request(vec![])).await;
    assert_eq!(result.code(), Some("runtime_failed"));
    assert_eq!(result.events.last().unwrap().data, json!({"code": "runtime_failed", "source": "envelope"}));
    assert_eq!(*errors.borrow(), vec![TurnError::Runtime(RuntimeFailure::message("boom"))]);
    assert_eq!(kernel.turn_ends.borrow()[0].ended_by, Some(Source::Envelope));
}

#[tokio::test(start_paused = true)]
async fn e34_a_host_port_throwing_a_non_outage_is_runtime_failed_and_reported() {
    for op in [Op::Open, Op::Admit, Op::Reach, Op::List] {
        let kernel = FakeKernel::with_tools(vec![]);
        kernel.fail(op, KernelError::Port("store offline".into()));
        let errors = Rc::new(RefCell::new(vec![]));
        let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
        let result = run(&executor(&kernel, &p, recording_options(&errors)), request(vec![])).await;
        assert_eq!(result.code(), Some("runtime_failed"), "{op:?}");
        assert_eq!(*errors.borrow(), vec![TurnError::Kernel(KernelError::Port("store offline".into()))]);
        assert_eq!(p.runs.get(), 0);
    }
}

#[tokio::test(start_paused = true)]
async fn e35_a_panicking_turn_error_hook_does_not_change_the_result() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = plugin(|_r, _h, _s| async move { Err(RuntimeFailure::message("boom")) });
    let opts = ExecutorOptions {
        on_turn_error: Some(Rc::new(|_: &TurnError, _: &sharedos_envelope::options::TurnErrorContext| {
            panic!("hook broke")
        })),
        ..options()
    };
    let result = run(&executor(&kernel, &p, opts), request(vec![])).await;
    assert_eq!(result.code(), Some("runtime_failed"));
}

#[tokio::test(start_paused = true)]
async fn e36_on_event_sees_every_event_in_order_and_cannot_change_the_result() {
    let kernel = FakeKernel::with_tools(vec![read_tool("files.read")]);
    let seen: Rc<RefCell<Vec<ExecutionEvent>>> = Rc::default();
    let sink = seen.clone();
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "files.read", json!({})), sharedos_envelope::host::ToolInvocationOptions::none())
            .await?;
        Ok(complete(Value::Null))
    });
    let exec = executor(
        &kernel,
        &p,
        ExecutorOptions { on_event: Some(Rc::new(|_: &ExecutionEvent| panic!("observer broke"))), ..options() },
    );
    let on_event = Rc::new(move |e: &ExecutionEvent| sink.borrow_mut().push(e.clone()));
    let result = exec
        .execute(request(vec![read_tool("files.read")]), ExecuteOptions { signal: None, on_event: Some(on_event) })
        .await
        .unwrap();
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(*seen.borrow(), *result.events);
    let sequences: Vec<u64> = result.events.iter().map(|e| e.sequence).collect();
    assert_eq!(sequences, (0..result.events.len() as u64).collect::<Vec<_>>());
    assert!(result.events.iter().all(|e| e.trace_id == TRACE && e.execution_id == "exec-1"));
}

#[tokio::test(start_paused = true)]
async fn e37_e38_escalate_with_the_affordance_is_escalated_and_pending() {
    let kernel = FakeKernel::with_tools(vec![escalate_tool()]);
    let p =
        plugin(|_r, _h, _s| async move { Ok(with_metadata(escalate("  need approval "), meta(&[("k", json!(1))]))) });
    let result = run(&executor(&kernel, &p, options()), request(vec![escalate_tool()])).await;
    assert_eq!(result.status, ExecutionStatus::Escalated);
    assert_eq!(result.error, None);
    let escalation = result.escalation.clone().unwrap();
    assert_eq!((escalation.status.as_str(), escalation.reviewer.clone()), ("pending", owner()));
    let last = result.events.last().unwrap();
    assert_eq!(last.kind, "turn.escalated");
    assert_eq!(last.data, json!({"reason": "  need approval ", "reviewer": {"kind": "human", "userId": "user-owner"}}));
    assert_eq!(result.metadata.unwrap()["k"], 1);
    assert_eq!(kernel.turn_ends.borrow()[0].status, ExecutionStatus::Escalated);
    let requested = kernel.trail("escalation.requested");
    assert_eq!(
        (requested.len(), requested[0].outcome.as_str(), requested[0].reason.as_deref()),
        (1, "escalated", Some("escalation_requested"))
    );
}

#[tokio::test(start_paused = true)]
async fn e39_e40_escalate_without_the_served_affordance_fails_tool_unavailable() {
    // The request lists sharedos.escalate, but the kernel did not list it (no grant).
    let kernel = FakeKernel::with_tools(vec![read_tool("files.read")]);
    let p = plugin(
        |_r, _h, _s| async move { Ok(with_metadata(escalate("need approval"), meta(&[("kept", json!(true))]))) },
    );
    let result = run(&executor(&kernel, &p, options()), request(vec![escalate_tool(), read_tool("files.read")])).await;
    assert_eq!(result.status, ExecutionStatus::Failed);
    assert_eq!(result.code(), Some("tool_unavailable"));
    assert_eq!(result.error.as_ref().unwrap().retryable, None);
    assert_eq!(result.events.last().unwrap().data, json!({"code": "tool_unavailable", "source": "envelope"}));
    assert_eq!(result.metadata.unwrap()["kept"], true);
    assert_eq!(kernel.op_count("escalate"), 0);
    assert_eq!(kernel.op_count("invoke:"), 0);
    assert!(kernel.trail("escalation.requested").is_empty());
    assert_eq!(kernel.turn_ends.borrow()[0].ended_by, Some(Source::Envelope));
}

#[tokio::test(start_paused = true)]
async fn e41_an_escalation_reason_must_be_1_to_512_chars_after_trimming() {
    let kernel = FakeKernel::with_tools(vec![escalate_tool()]);
    for (reason, ok) in [("   ", false), (&*"x".repeat(513), false), (&*"y".repeat(512), true)] {
        let reason = reason.to_string();
        let p = plugin(move |_r, _h, _s| {
            let reason = reason.clone();
            async move { Ok(escalate(&reason)) }
        });
        let result = run(&executor(&kernel, &p, options()), request(vec![escalate_tool()])).await;
        let expected = if ok { ExecutionStatus::Escalated } else { ExecutionStatus::Failed };
        assert_eq!(result.status, expected);
        if !ok {
            assert_eq!(result.code(), Some("invalid_runtime_outcome"));
        }
    }
}

#[tokio::test(start_paused = true)]
async fn e44_an_escalation_asked_annotation_is_kept_on_the_escalated_result() {
    let kernel = FakeKernel::with_tools(vec![escalate_tool()]);
    let p = plugin(|_r, host, _s| async move {
        host.annotate("escalationAsked", json!({"tool": "sharedos.escalate", "reason": "need approval"}))?;
        Ok(escalate("need approval"))
    });
    let result = run(&executor(&kernel, &p, options()), request(vec![escalate_tool()])).await;
    assert_eq!(
        result.metadata.unwrap()["escalationAsked"],
        json!({"tool": "sharedos.escalate", "reason": "need approval"})
    );
}

#[tokio::test(start_paused = true)]
async fn e69_a_forged_audit_outage_is_credited_runtime_failed() {
    let kernel = FakeKernel::with_tools(vec![]);
    let errors = Rc::new(RefCell::new(vec![]));
    let forged = AuditUnavailable { effect: AuditEffect::None, cause: "made up".into() };
    let p = plugin(move |_r, _h, _s| {
        let forged = forged.clone();
        async move { Err(RuntimeFailure::AuditUnavailable(forged)) }
    });
    let result = run(&executor(&kernel, &p, recording_options(&errors)), request(vec![])).await;
    assert_eq!(result.code(), Some("runtime_failed"));
    assert!(!kernel.turn_ends.borrow()[0].fail_closed);
    assert!(matches!(errors.borrow()[0], TurnError::Runtime(RuntimeFailure::AuditUnavailable(_))));
}

#[tokio::test(start_paused = true)]
async fn e42_escalation_grants_nothing_the_next_turn_holds_the_same_authority() {
    let world = support::reference::Reference::new();
    let store_before = world.fixtures.grant_source.grants();
    let escalating = plugin(|_r, _h, _s| async move { Ok(escalate("need approval")) });
    assert_eq!(world.run(escalating.clone(), 1).await.status, ExecutionStatus::Escalated);
    assert_eq!(world.fixtures.grant_source.grants(), store_before, "no grant was issued by escalating");
    let looking = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
    assert_eq!(world.run(looking.clone(), 2).await.status, ExecutionStatus::Succeeded);
    let resolved = |turn| {
        let trail = world.trail(turn);
        let event = trail.into_iter().find(|e| e.kind == AuditType::AuthorityResolved).unwrap();
        (event.authority_hash, event.metadata.unwrap()["grantIds"].clone())
    };
    assert_eq!(resolved(2), resolved(1));
    let offered =
        |plugin: &ScriptedPlugin| plugin.seen.borrow()[0].tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(offered(&looking), offered(&escalating));
}

#[tokio::test(start_paused = true)]
async fn e43_the_escalation_handler_if_invoked_fails_escalation_not_terminated() {
    let world = support::reference::Reference::new();
    let p = plugin(|r, host, _s| async move {
        let call = ToolCall {
            id: "c1".into(),
            tool: "sharedos.escalate".into(),
            arguments: json!({"reason": "please look"}).as_object().cloned().unwrap(),
            trace_id: r.context.trace_id.clone(),
            requested_at: r.context.now.clone(),
        };
        let answer = host.invoke_tool(call, ToolInvocationOptions::none()).await?;
        Ok(complete(json!({"status": answer.status().as_str(), "code": answer.error().map(|e| e.code.clone())})))
    });
    let result = world.run(p, 1).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.output, Some(json!({"status": "failed", "code": "escalation_not_terminated"})));
    assert!(world.trail(1).iter().all(|e| e.kind != AuditType::EscalationRequested), "nothing was escalated");
}

#[tokio::test(start_paused = true)]
async fn a_borrowed_request_runs_the_same_turn_as_an_owned_one() {
    let kernel = FakeKernel::with_tools(vec![read_tool("files.read")]);
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "files.read", json!({})), ToolInvocationOptions::none()).await?;
        Ok(complete(json!("done")))
    });
    let owned = run(&executor(&kernel, &p, options()), request(vec![read_tool("files.read")])).await;
    let borrowed = executor(&kernel, &p, options())
        .execute_borrowed(&request(vec![read_tool("files.read")]), ExecuteOptions::default())
        .await
        .unwrap();
    assert_eq!(borrowed, owned);
}
