//! Audit outage: E65–E74 (E70 and E74 run the reference kernel's post-effect path).

use crate::support;

use serde_json::{json, Value};
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::error::TurnError;
use sharedos_envelope::host::ToolInvocationOptions;
use sharedos_envelope::options::{ExecutorOptions, TurnErrorContext};
use sharedos_envelope::runtime::complete;
use sharedos_kernel::ports::AuditWriteError;
use sharedos_model::audit::{AuditType, Source};
use sharedos_model::execution::ExecutionStatus;
use sharedos_port::audit::AuditEffect;
use sharedos_port::error::KernelError;
use sharedos_testkit::call::call;
use sharedos_testkit::events::kinds;
use std::cell::RefCell;
use std::future::pending;
use std::rc::Rc;
use support::reference::{read_policy, SlowSink};
use support::*;

fn none() -> ToolInvocationOptions {
    ToolInvocationOptions::none()
}

fn tools() -> Vec<sharedos_model::tool::ToolDefinition> {
    vec![read_tool("files.read"), write_tool("payments.transfer")]
}

fn recording(errors: &Rc<RefCell<Vec<TurnError>>>, grace_ms: u64) -> ExecutorOptions {
    let sink = errors.clone();
    ExecutorOptions {
        drain_grace_ms: grace_ms,
        on_turn_error: Some(Rc::new(move |e: &TurnError, _: &TurnErrorContext| sink.borrow_mut().push(e.clone()))),
        ..options()
    }
}

#[tokio::test(start_paused = true)]
async fn e65_e66_e67_a_swallowed_outage_still_ends_the_turn_audit_unavailable() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::outage(AuditEffect::None));
    let errors = Rc::new(RefCell::new(vec![]));
    let p = plugin(|_r, host, _s| async move {
        let swallowed = host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await;
        assert!(matches!(
            swallowed,
            Err(sharedos_envelope::error::HostError::Kernel(KernelError::AuditUnavailable(_)))
        ));
        Ok(complete(json!("pretend all is well")))
    });
    let result = run(&executor(&kernel, &p, recording(&errors, 0)), request(tools())).await;
    assert_eq!((result.status, result.code()), (ExecutionStatus::Failed, Some("audit_unavailable")));
    assert_eq!(result.output, None);
    assert_eq!(result.events.last().unwrap().data, json!({"code": "audit_unavailable", "source": "envelope"}));
    let end = kernel.turn_ends.borrow()[0].clone();
    assert_eq!(
        (end.status, end.reason_code.as_deref(), end.ended_by, end.fail_closed),
        (ExecutionStatus::Failed, Some("audit_unavailable"), Some(Source::Envelope), true)
    );
    assert_eq!(*errors.borrow(), vec![TurnError::AuditUnavailable(sink_error())]);
    let first = errors.borrow()[0].clone();
    assert!(matches!(first, TurnError::AuditUnavailable(outage) if outage.cause == "sink refused the write"));
}

#[tokio::test(start_paused = true)]
async fn e68_outages_while_opening_end_the_turn_without_run() {
    for op in [Op::Open, Op::Admit, Op::Reach, Op::List] {
        let kernel = FakeKernel::with_tools(tools());
        kernel.fail(op, KernelError::AuditUnavailable(sink_error()));
        let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
        let result = run(&executor(&kernel, &p, options()), request(tools())).await;
        assert_eq!(result.code(), Some("audit_unavailable"), "{op:?}");
        assert_eq!(kinds(&result), vec!["turn.failed"]);
        assert_eq!(p.runs.get(), 0);
    }
}

#[tokio::test(start_paused = true)]
async fn e71_with_grace_the_hard_stop_comes_grace_after_the_outage() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("files.read", Handler::slow(60_000, Answer::Succeed));
    kernel.handle("payments.transfer", Handler::outage(AuditEffect::None));
    let p = plugin(|_r, host, _s| async move {
        let _sibling = host.invoke_tool(call("c1", "files.read", json!({})), none());
        sleep_ms(1_000).await;
        host.invoke_tool(call("c2", "payments.transfer", json!({})), none()).await?;
        Ok(complete(Value::Null))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!(result.code(), Some("audit_unavailable"));
    assert_eq!(ms_of(&result.completed_at), 6_000);
    assert_eq!(kernel.trail("tool.invoked")[0].outcome, "interrupted");
    // (A mediated outage can only happen before T − G, so outage + G < T.)
}

#[tokio::test(start_paused = true)]
async fn e73_audit_unavailable_outranks_turn_cancelled() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::outage(AuditEffect::None));
    let p = plugin(|_r, host, _s| async move {
        let _ = host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await;
        pending::<Result<Value, RuntimeFailure>>().await
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!((result.status, result.code()), (ExecutionStatus::Failed, Some("audit_unavailable")));
    assert_eq!(ms_of(&result.completed_at), 5_000);
    assert!(!kinds(&result).contains(&"turn.cancelled".to_string()));
}

#[tokio::test(start_paused = true)]
async fn e70_a_failing_post_effect_write_never_ends_the_turn_and_goes_to_the_hook() {
    let world = support::reference::Reference::new();
    world.fixtures.audit.fail_from_nth(AuditType::ToolInvoked, 1);
    let p = plugin(|r, host, _s| async move {
        let answer = host.invoke_tool(read_policy("c1", &r.context.trace_id), none()).await?;
        Ok(complete(json!(answer.status().as_str())))
    });
    let result = world.run(p, 1).await;
    assert_eq!((result.status, result.output), (ExecutionStatus::Succeeded, Some(json!("succeeded"))));
    let dropped = world.dropped.borrow();
    assert_eq!(dropped.len(), 1, "exactly the refused tool.invoked record reached the hook");
    assert_eq!((dropped[0].0.kind, dropped[0].0.operation_id.as_deref()), (AuditType::ToolInvoked, Some("c1")));
    assert!(matches!(dropped[0].1, AuditWriteError::Failed(_)));
    assert!(world.trail(1).iter().any(|e| e.kind == AuditType::TurnEnded), "the turn still ended normally");
}

#[tokio::test(start_paused = true)]
async fn e74_a_hanging_post_effect_write_is_bounded_but_a_slow_pre_effect_write_is_not() {
    // Decisions (pre-effect) take 3 s to write; outcomes (post-effect) 10 s.
    let world = support::reference::Reference::build(
        |fixtures| {
            Rc::new(SlowSink {
                inner: fixtures.audit.clone(),
                delays: vec![(AuditType::AuthorizationChecked, 3_000), (AuditType::ToolInvoked, 10_000)],
            })
        },
        |builder| builder.audit_write_timeout_ms(50),
    );
    let p = plugin(|r, host, _s| async move {
        let started = tokio::time::Instant::now();
        let answer = host.invoke_tool(read_policy("c1", &r.context.trace_id), none()).await?;
        Ok(complete(json!([answer.status().as_str(), started.elapsed().as_millis() as u64])))
    });
    let result = world.run(p, 1).await;
    // One invocation decision waited out in full, then the outcome write cut at 50 ms.
    assert_eq!(result.output, Some(json!(["succeeded", 3_050])));
    let dropped = world.dropped.borrow();
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].0.kind, AuditType::ToolInvoked);
    assert_eq!(dropped[0].1, AuditWriteError::TimedOut(50));
}
