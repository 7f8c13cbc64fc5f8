//! Deadline, drain and cancellation: E45–E64.

use crate::support;

use serde_json::{json, Value};
use sharedos_envelope::deadline::TurnDeadlines;
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::error::TurnError;
use sharedos_envelope::host::ToolInvocationOptions;
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions};
use sharedos_envelope::runtime::complete;
use sharedos_envelope::tasks::TaskSet;
use sharedos_model::execution::{ExecutionOptions, ExecutionStatus};
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::call::call;
use sharedos_testkit::events::kinds;
use std::cell::RefCell;
use std::future::pending;
use std::rc::Rc;
use support::*;

fn none() -> ToolInvocationOptions {
    ToolInvocationOptions::none()
}

fn tools() -> Vec<sharedos_model::tool::ToolDefinition> {
    vec![read_tool("files.read"), write_tool("payments.transfer")]
}

/// Drives a task set for `ms` of virtual time.
async fn drive_for(tasks: &TaskSet, ms: u64) {
    tokio::select! {
        biased;
        () = tasks.drive() => {}
        () = sleep_ms(ms) => {}
    }
}

#[tokio::test(start_paused = true)]
async fn e46_soft_fires_at_exactly_t_minus_g_and_hard_at_t() {
    let tasks = TaskSet::new();
    let pair = TurnDeadlines::start(None, 10_000, 3_000, &tasks);
    drive_for(&tasks, 6_999).await;
    assert!(!pair.soft().is_aborted());
    drive_for(&tasks, 1).await;
    assert!(pair.soft().is_aborted());
    assert_eq!(pair.soft().reason(), Some(AbortReason::Draining));
    assert!(!pair.hard().is_aborted());
    drive_for(&tasks, 2_999).await;
    assert!(!pair.hard().is_aborted());
    drive_for(&tasks, 1).await;
    assert_eq!(pair.hard().reason(), Some(AbortReason::Timeout));
}

#[tokio::test(start_paused = true)]
async fn e58_e59_draining_fires_with_the_hard_signal_and_keeps_its_own_reason() {
    let tasks = TaskSet::new();
    let host = AbortSignal::new();
    let pair = TurnDeadlines::start(Some(&host), 10_000, 0, &tasks);
    host.abort(AbortReason::HostCancelled);
    assert_eq!(pair.hard().reason(), Some(AbortReason::HostCancelled));
    assert_eq!(pair.soft().reason(), Some(AbortReason::Draining));
    let pair = TurnDeadlines::start(None, 10_000, 2_000, &tasks);
    pair.drain(AbortReason::AuditOutage(sink_error()));
    assert_eq!(pair.soft().reason(), Some(AbortReason::Draining), "never the outage");
    drive_for(&tasks, 1_999).await;
    assert!(!pair.hard().is_aborted());
    drive_for(&tasks, 1).await;
    assert_eq!(pair.hard().reason(), Some(AbortReason::AuditOutage(sink_error())));
}

#[tokio::test(start_paused = true)]
async fn e60_dispose_clears_every_timer_and_drain_arms_nothing_after() {
    let tasks = TaskSet::new();
    let host = AbortSignal::new();
    let pair = TurnDeadlines::start(Some(&host), 10_000, 2_000, &tasks);
    assert_eq!(pair.armed_timers(), 2);
    pair.drain(AbortReason::AuditOutage(sink_error()));
    assert_eq!(pair.armed_timers(), 3);
    pair.dispose();
    assert_eq!(pair.armed_timers(), 0);
    tasks.drive_to_completion().await;
    assert_eq!(tasks.pending(), 0);
    pair.drain(AbortReason::AuditOutage(sink_error()));
    assert_eq!(pair.armed_timers(), 0);
    host.abort(AbortReason::HostCancelled);
    assert!(!pair.hard().is_aborted(), "a host abort after dispose does not reach the turn");
}

#[tokio::test(start_paused = true)]
async fn e45_e51_without_grace_a_running_handler_is_interrupted_at_the_deadline() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::slow(1_000_000, Answer::Succeed));
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await?;
        Ok(complete(Value::Null))
    });
    let mut req = request(tools());
    req.options = Some(ExecutionOptions { timeout_ms: Some(30_000), ..ExecutionOptions::default() });
    let result = run(&executor(&kernel, &p, options()), req).await;
    assert_eq!((result.status, result.code()), (ExecutionStatus::Cancelled, Some("turn_cancelled")));
    assert_eq!(ms_of(&result.completed_at), 30_000);
    assert_eq!(kinds(&result), vec!["turn.started", "tool.requested", "turn.cancelled"]);
    let invoked = kernel.trail("tool.invoked");
    assert_eq!((invoked[0].outcome.as_str(), invoked[0].reason.as_deref()), ("interrupted", Some("operation_aborted")));
}

#[tokio::test(start_paused = true)]
async fn e47_e63_calls_after_the_soft_signal_are_refused_and_the_ignorer_is_stopped_at_t() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(115_000).await;
        loop {
            let answer = host.invoke_tool(call("c", "payments.transfer", json!({})), none()).await?;
            assert_eq!(answer.error().unwrap().code, "turn_draining");
            sleep_ms(1_000).await;
        }
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!((result.status, ms_of(&result.completed_at)), (ExecutionStatus::Cancelled, 120_000));
    assert_eq!(kernel.op_count("invoke:"), 0);
    let refused = kernel.trail("tool.invoked");
    assert_eq!(refused.len(), 5);
    assert!(refused.iter().all(|a| a.source == "envelope" && a.reason.as_deref() == Some("turn_draining")));
}

#[tokio::test(start_paused = true)]
async fn e48_e49_a_handler_running_at_the_soft_signal_finishes_and_the_turn_ends_when_it_settles() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::slow(4_000, Answer::Succeed));
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(113_000).await;
        let _pending = host.invoke_tool(call("c1", "payments.transfer", json!({})), none());
        host.draining().aborted().await;
        Err(RuntimeFailure::message("draining"))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!((result.status, result.code()), (ExecutionStatus::Cancelled, Some("turn_cancelled")));
    assert_eq!(ms_of(&result.completed_at), 117_000);
    assert_eq!(kinds(&result), vec!["turn.started", "tool.requested", "tool.completed", "turn.cancelled"]);
    assert_eq!(kernel.trail("tool.invoked")[0].outcome, "succeeded");
}

#[tokio::test(start_paused = true)]
async fn e50_a_handler_still_running_at_t_during_a_drain_is_interrupted() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::slow(20_000, Answer::Succeed));
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(113_000).await;
        let _pending = host.invoke_tool(call("c1", "payments.transfer", json!({})), none());
        host.draining().aborted().await;
        Err(RuntimeFailure::message("draining"))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!(ms_of(&result.completed_at), 120_000);
    assert_eq!(kernel.trail("tool.invoked")[0].outcome, "interrupted");
    assert_eq!(kernel.trail("tool.invoked")[0].at_ms, 120_000);
}

#[tokio::test(start_paused = true)]
async fn e52_a_complete_landing_during_the_drain_is_honoured() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(117_000).await;
        assert!(host.draining().is_aborted());
        Ok(complete(json!("late but fine")))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(ms_of(&result.completed_at), 117_000);
}

#[tokio::test(start_paused = true)]
async fn e54_a_drained_turn_ends_cancelled_even_after_its_last_step() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("files.read", Handler::slow(3_000, Answer::Succeed));
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(114_000).await;
        host.invoke_tool(call("c1", "files.read", json!({})), ToolInvocationOptions::at_step(0)).await?;
        if host.draining().is_aborted() {
            return Err(RuntimeFailure::message("draining after the last step"));
        }
        Ok(complete(Value::Null))
    });
    let mut req = request(tools());
    req.options = Some(ExecutionOptions { max_steps: Some(1), ..ExecutionOptions::default() });
    let result = run(&executor(&kernel, &p, grace(5_000)), req).await;
    assert_eq!((result.status, result.code()), (ExecutionStatus::Cancelled, Some("turn_cancelled")));
}

#[tokio::test(start_paused = true)]
async fn e57_a_deadline_during_opening_cancels_without_turn_started() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.delay(Op::List, 200_000);
    let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_eq!(kinds(&result), vec!["turn.cancelled"]);
    assert_eq!(ms_of(&result.completed_at), 120_000);
    assert_eq!(p.runs.get(), 0);
}

#[tokio::test(start_paused = true)]
async fn e57_a_lease_opened_after_the_turn_was_cancelled_is_still_closed() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.delay(Op::Open, 130_000);
    let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert_eq!(kernel.scope_closes.get(), 1);
}

#[tokio::test(start_paused = true)]
async fn e60_e61_no_timer_survives_and_a_late_outage_changes_nothing() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle(
        "payments.transfer",
        Handler { reject_with_abort_reason: true, ..Handler::slow(50_000, Answer::Succeed) },
    );
    let p = plugin(|_r, host, _s| async move {
        let _late = host.invoke_tool(call("c1", "payments.transfer", json!({})), none());
        sleep_ms(10).await;
        Ok(complete(json!("done")))
    });
    let exec = executor(&kernel, &p, grace(5_000));
    let result = run(&exec, request(tools())).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(ms_of(&result.completed_at), 10);
    // The call was abandoned at close and recorded interrupted (E100): the
    // drain wait is only on the path where the runtime throws.
    assert_eq!(kernel.trail("tool.invoked")[0].outcome, "interrupted");
    let before = tokio::time::Instant::now();
    sleep_ms(1_000_000).await;
    assert_eq!(before.elapsed().as_millis(), 1_000_000);
    assert_eq!(kernel.turn_ends.borrow().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn e61_a_kernel_outage_after_close_arms_nothing_and_changes_nothing() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler { outage_on_abort: true, ..Handler::slow(50_000, Answer::Succeed) });
    let p = plugin(|_r, host, _s| async move {
        let _late = host.invoke_tool(call("c1", "payments.transfer", json!({})), none());
        sleep_ms(10).await;
        Ok(complete(json!("done")))
    });
    let exec = executor(&kernel, &p, grace(5_000));
    let started = tokio::time::Instant::now();
    let result = run(&exec, request(tools())).await;
    // A grace timer armed by the late rejection would have held `execute` 5 s longer.
    assert_eq!(started.elapsed().as_millis(), 10);
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.events.last().unwrap().kind, "turn.completed");
    assert_eq!(kernel.turn_ends.borrow()[0].status, ExecutionStatus::Succeeded);
}

#[tokio::test(start_paused = true)]
async fn e62_grace_at_least_timeout_mediates_nothing() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        let answer = host.invoke_tool(call("c1", "files.read", json!({})), none()).await?;
        assert_eq!(answer.error().unwrap().code, "turn_draining");
        pending::<Result<Value, RuntimeFailure>>().await
    });
    let mut req = request(tools());
    req.options = Some(ExecutionOptions { timeout_ms: Some(5_000), ..ExecutionOptions::default() });
    let result = run(&executor(&kernel, &p, grace(5_000)), req).await;
    assert_eq!(kernel.op_count("invoke:"), 0);
    assert_eq!((result.status, ms_of(&result.completed_at)), (ExecutionStatus::Cancelled, 5_000));
}

#[tokio::test(start_paused = true)]
async fn e55_e64_host_cancellation_is_immediate_and_never_reported() {
    let kernel = FakeKernel::with_tools(tools());
    let errors: Rc<RefCell<Vec<TurnError>>> = Rc::default();
    let sink = errors.clone();
    let p = plugin(|_r, _h, _s| async move { pending::<Result<Value, RuntimeFailure>>().await });
    let opts = ExecutorOptions {
        drain_grace_ms: 60_000,
        on_turn_error: Some(Rc::new(move |e: &TurnError, _: &sharedos_envelope::options::TurnErrorContext| {
            sink.borrow_mut().push(e.clone())
        })),
        ..options()
    };
    let exec = executor(&kernel, &p, opts);
    let signal = AbortSignal::new();
    let cancel = signal.clone();
    let (result, ()) = tokio::join!(
        exec.execute(request(tools()), ExecuteOptions { signal: Some(signal), on_event: None }),
        async move {
            sleep_ms(2_500).await;
            cancel.abort(AbortReason::HostCancelled);
        }
    );
    let result = result.unwrap();
    assert_eq!((result.status, ms_of(&result.completed_at)), (ExecutionStatus::Cancelled, 2_500));
    assert_eq!(kinds(&result), vec!["turn.started", "turn.cancelled"]);
    assert!(errors.borrow().is_empty());
    // A deadline ending is not reported either.
    let result = run(&exec, request(tools())).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert!(errors.borrow().is_empty());
}

#[tokio::test(start_paused = true)]
async fn e53_a_cooperative_runtime_can_see_draining_before_asking() {
    // The envelope side of E53: `draining` is observable before a decision.
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(116_000).await;
        if host.draining().is_aborted() {
            return Err(RuntimeFailure::message("not asking the seat"));
        }
        Ok(complete(Value::Null))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert_eq!(ms_of(&result.completed_at), 116_000);
}
