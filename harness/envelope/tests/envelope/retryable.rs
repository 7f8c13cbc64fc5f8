//! The retryable rule, E75–E84, and its worked examples W1–W22.

use crate::support;

use serde_json::{json, Value};
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::host::ToolInvocationOptions;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_envelope::runtime::{complete, fail};
use sharedos_model::execution::{ExecutionResult, ExecutionStatus};
use sharedos_model::tool::ProtocolError;
use sharedos_port::audit::AuditEffect;
use sharedos_port::error::KernelError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::call::call;
use sharedos_testkit::events::kinds;
use std::future::pending;
use std::rc::Rc;
use support::*;

fn none() -> ToolInvocationOptions {
    ToolInvocationOptions::none()
}

fn assert_ending(result: &ExecutionResult, status: ExecutionStatus, code: &str, retry: Option<bool>) {
    assert_eq!(result.status, status, "{result:#?}");
    assert_eq!(result.code(), Some(code), "{result:#?}");
    assert_eq!(retryable(result), retry, "{result:#?}");
}

fn tools() -> Vec<sharedos_model::tool::ToolDefinition> {
    vec![
        read_tool("files.read"),
        write_tool("payments.transfer"),
        idempotent_write("files.put"),
        write_tool("payments.refund"),
    ]
}

/// One call to `tool`, then wait for the deadline.
async fn call_then_deadline(tool: &'static str, handler: Option<Handler>) -> (ExecutionResult, Rc<FakeKernel>) {
    let kernel = FakeKernel::with_tools(tools());
    if let Some(h) = handler {
        kernel.handle(tool, h);
    }
    let p = plugin(move |_r, host, _s| async move {
        let _ = host.invoke_tool(call("c1", tool, json!({})), none()).await;
        pending::<Result<Value, RuntimeFailure>>().await
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    (result, kernel)
}

#[tokio::test(start_paused = true)]
async fn w1_e75_read_only_turn_cancelled_at_deadline_is_retryable() {
    let (result, _) = call_then_deadline("files.read", None).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(true));
    assert_eq!(ms_of(&result.completed_at), 120_000);
}

#[tokio::test(start_paused = true)]
async fn w2_e76_idempotent_write_keeps_the_turn_retryable() {
    let (result, _) = call_then_deadline("files.put", None).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(true));
}

#[tokio::test(start_paused = true)]
async fn w3_e77_succeeded_non_idempotent_write_is_not_retryable() {
    let (result, _) = call_then_deadline("payments.transfer", None).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(false));
    assert_eq!(ms_of(&result.completed_at), 120_000);
}

#[tokio::test(start_paused = true)]
async fn w4_e78_write_still_in_its_handler_at_the_deadline_is_not_retryable() {
    let (result, kernel) = call_then_deadline("payments.transfer", Some(Handler::slow(500_000, Answer::Succeed))).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(false));
    let invoked = kernel.trail("tool.invoked");
    assert_eq!(invoked.len(), 1);
    assert_eq!(invoked[0].outcome, "interrupted");
    assert_eq!(invoked[0].at_ms, 120_000);
}

async fn throw_after(tool: &'static str) -> ExecutionResult {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(move |_r, host, _s| async move {
        host.invoke_tool(call("c1", tool, json!({})), none()).await?;
        Err(RuntimeFailure::message("boom"))
    });
    run(&executor(&kernel, &p, options()), request(tools())).await
}

#[tokio::test(start_paused = true)]
async fn w5_plugin_throw_after_transfer_or_lookup() {
    assert_ending(&throw_after("payments.transfer").await, ExecutionStatus::Failed, "runtime_failed", Some(false));
    assert_ending(&throw_after("files.read").await, ExecutionStatus::Failed, "runtime_failed", Some(true));
}

async fn fail_after(tool: Option<&'static str>, code: &'static str, retry: Option<bool>) -> ExecutionResult {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(move |_r, host, _s| async move {
        if let Some(tool) = tool {
            host.invoke_tool(call("c1", tool, json!({})), none()).await?;
        }
        Ok(fail(ProtocolError { retryable: retry, ..ProtocolError::new(code, "gave up") }))
    });
    run(&executor(&kernel, &p, options()), request(tools())).await
}

#[tokio::test(start_paused = true)]
async fn w6_e81_plugin_retryable_true_is_downgraded_after_a_transfer() {
    assert_ending(
        &fail_after(Some("payments.transfer"), "harness_failed", Some(true)).await,
        ExecutionStatus::Failed,
        "harness_failed",
        Some(false),
    );
    assert_ending(
        &fail_after(Some("files.read"), "harness_failed", Some(true)).await,
        ExecutionStatus::Failed,
        "harness_failed",
        Some(true),
    );
}

#[tokio::test(start_paused = true)]
async fn w7_e81_plugin_retryable_false_or_absent_is_never_raised() {
    assert_ending(
        &fail_after(None, "harness_failed", Some(false)).await,
        ExecutionStatus::Failed,
        "harness_failed",
        Some(false),
    );
    assert_ending(&fail_after(None, "harness_failed", None).await, ExecutionStatus::Failed, "harness_failed", None);
}

#[tokio::test(start_paused = true)]
async fn w8_e80_draining_refusal_leaves_the_turn_retryable() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(116_000).await;
        let answer = host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await?;
        assert_eq!(answer.error().unwrap().code, "turn_draining");
        if host.draining().is_aborted() {
            return Err(RuntimeFailure::message("draining"));
        }
        Ok(complete(json!(null)))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(true));
    assert_eq!(ms_of(&result.completed_at), 116_000);
    let invoked = kernel.trail("tool.invoked");
    assert_eq!(
        (invoked[0].outcome.as_str(), invoked[0].reason.as_deref(), invoked[0].source),
        ("denied", Some("turn_draining"), "envelope")
    );
    assert_eq!(kernel.op_count("invoke:"), 0);
}

#[tokio::test(start_paused = true)]
async fn w9_transfer_completing_during_the_drain_ends_the_turn_early_and_unretryable() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::slow(3_000, Answer::Succeed));
    let p = plugin(|_r, host, _s| async move {
        sleep_ms(114_000).await;
        host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await?;
        if host.draining().is_aborted() {
            return Err(RuntimeFailure::message("draining"));
        }
        Ok(complete(json!(null)))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(false));
    assert_eq!(ms_of(&result.completed_at), 117_000);
    assert!(kinds(&result).contains(&"tool.completed".to_string()));
    assert_eq!(kernel.trail("tool.invoked")[0].outcome, "succeeded");
    let last = kernel.audit.borrow().last().cloned().unwrap();
    assert_eq!((last.kind, last.reason.as_deref()), ("turn.ended", Some("turn_cancelled")));
}

#[tokio::test(start_paused = true)]
async fn w10_outage_on_the_first_decision_is_retryable() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::outage(AuditEffect::None));
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await?;
        Ok(complete(json!(null)))
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(true));
}

#[tokio::test(start_paused = true)]
async fn w11_outage_after_a_transfer_is_not_retryable() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.refund", Handler::outage(AuditEffect::None));
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await?;
        host.invoke_tool(call("c2", "payments.refund", json!({})), none()).await?;
        Ok(complete(json!(null)))
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(false));
}

async fn sibling_in_handler_then_outage(handler: Handler) -> (ExecutionResult, Rc<FakeKernel>) {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", handler);
    kernel.handle("payments.refund", Handler::outage(AuditEffect::None));
    let p = plugin(|_r, host, _s| async move {
        let first = host.invoke_tool(call("c1", "payments.transfer", json!({})), none());
        sleep_ms(1_000).await;
        host.invoke_tool(call("c2", "payments.refund", json!({})), none()).await?;
        first.await?;
        Ok(complete(json!(null)))
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    (result, kernel)
}

#[tokio::test(start_paused = true)]
async fn w12_e72_outage_without_grace_interrupts_the_sibling() {
    let (result, kernel) = sibling_in_handler_then_outage(Handler::slow(10_000, Answer::Succeed)).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(false));
    let invoked = kernel.trail("tool.invoked");
    assert_eq!((invoked[0].outcome.as_str(), invoked[0].reason.as_deref()), ("interrupted", Some("operation_aborted")));
    assert_eq!(ms_of(&result.completed_at), 1_000);
}

#[tokio::test(start_paused = true)]
async fn w13_e83_outage_rejection_after_the_abort_counts_as_an_effect() {
    let handler = Handler { reject_with_abort_reason: true, ..Handler::slow(10_000, Answer::Succeed) };
    let (result, _) = sibling_in_handler_then_outage(handler).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(false));
}

#[tokio::test(start_paused = true)]
async fn w14_e68_outage_on_the_listing_is_retryable_and_run_is_never_called() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.fail(Op::List, KernelError::AuditUnavailable(sink_error()));
    let p = plugin(|_r, _h, _s| async move { Ok(complete(json!(null))) });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(true));
    assert_eq!(p.runs.get(), 0);
    assert!(!kinds(&result).contains(&"turn.started".to_string()));
}

#[tokio::test(start_paused = true)]
async fn w15_e79_kernel_denied_write_does_not_affect_retryable() {
    let (result, _) =
        call_then_deadline("payments.transfer", Some(Handler::answer(Answer::Deny("no_matching_grant")))).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(true));
}

#[tokio::test(start_paused = true)]
async fn w16_e77_failed_write_is_not_proof_of_no_effect() {
    let (result, _) =
        call_then_deadline("payments.transfer", Some(Handler::answer(Answer::Fail("invalid_tool_arguments")))).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(false));
}

#[tokio::test(start_paused = true)]
async fn w17_e80_envelope_refused_write_then_throw_is_retryable() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        let answer = host.invoke_tool(call("c1", "payments.wire", json!({})), none()).await?;
        assert_eq!(answer.error().unwrap().code, "tool_unavailable");
        Err(RuntimeFailure::message("boom"))
    });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "runtime_failed", Some(true));
}

#[tokio::test(start_paused = true)]
async fn w18_e82_the_kernel_definition_decides_the_classification() {
    let kernel = FakeKernel::with_tools(vec![write_tool("files.sync")]);
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "files.sync", json!({})), none()).await?;
        pending::<Result<Value, RuntimeFailure>>().await
    });
    let result = run(&executor(&kernel, &p, options()), request(vec![read_tool("files.sync")])).await;
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(false));
}

#[tokio::test(start_paused = true)]
async fn w19_pre_aborted_host_signal_is_retryable_with_no_events() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, _h, _s| async move { Ok(complete(json!(null))) });
    let signal = AbortSignal::new();
    signal.abort(AbortReason::HostCancelled);
    let exec = executor(&kernel, &p, options());
    let result = exec.execute(request(tools()), ExecuteOptions { signal: Some(signal), on_event: None }).await.unwrap();
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(true));
    assert!(result.events.is_empty());
}

#[tokio::test(start_paused = true)]
async fn w20_driver_failure_after_a_transfer_is_downgraded() {
    let result = fail_after(Some("payments.transfer"), "driver_failed", Some(true)).await;
    assert_ending(&result, ExecutionStatus::Failed, "driver_failed", Some(false));
}

#[tokio::test(start_paused = true)]
async fn w21_e55_host_cancel_stops_at_once_despite_grace() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::slow(30_000, Answer::Succeed));
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await?;
        Ok(complete(json!(null)))
    });
    let exec = executor(&kernel, &p, grace(5_000));
    let signal = AbortSignal::new();
    let host_signal = signal.clone();
    let (result, ()) = tokio::join!(
        exec.execute(request(tools()), ExecuteOptions { signal: Some(signal), on_event: None }),
        async move {
            sleep_ms(10_000).await;
            host_signal.abort(AbortReason::HostCancelled);
        }
    );
    let result = result.unwrap();
    assert_ending(&result, ExecutionStatus::Cancelled, "turn_cancelled", Some(false));
    assert_eq!(ms_of(&result.completed_at), 10_000);
    let invoked = kernel.trail("tool.invoked");
    assert_eq!((invoked[0].outcome.as_str(), invoked[0].at_ms), ("interrupted", 10_000));
}

#[tokio::test(start_paused = true)]
async fn w22_e71_outage_with_grace_lets_the_sibling_finish() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::slow(3_000, Answer::Succeed));
    kernel.handle("payments.refund", Handler::outage(AuditEffect::None));
    let p = plugin(|_r, host, _s| async move {
        let _sibling = host.invoke_tool(call("c1", "payments.transfer", json!({})), none());
        let _ = host.invoke_tool(call("c2", "payments.refund", json!({})), none()).await;
        Ok(complete(json!("done anyway")))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(false));
    let completed: Vec<_> = result.events.iter().filter(|e| e.kind == "tool.completed").collect();
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0].data["callId"], "c1");
    assert_eq!(kernel.trail("tool.invoked")[0].outcome, "succeeded");
    assert_eq!(ms_of(&result.completed_at), 3_000);
    assert_eq!(result.events.last().unwrap().kind, "turn.failed");
}

#[tokio::test(start_paused = true)]
async fn e83_effect_none_outage_before_abort_is_not_an_effect() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("payments.transfer", Handler::outage(AuditEffect::None));
    let p = plugin(|_r, host, _s| async move {
        let _ = host.invoke_tool(call("c1", "payments.transfer", json!({})), none()).await;
        Ok(complete(json!(null)))
    });
    let result = run(&executor(&kernel, &p, grace(5_000)), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(true));
    let unknown = FakeKernel::with_tools(tools());
    unknown.handle("payments.transfer", Handler::outage(AuditEffect::Unknown));
    let result = run(&executor(&unknown, &p, grace(5_000)), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "audit_unavailable", Some(false));
}

#[tokio::test(start_paused = true)]
async fn e84_endings_that_offer_no_retry_carry_no_retryable() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, _h, _s| async move { Ok(json!({"type": "nonsense"})) });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "invalid_runtime_outcome", None);
    let p = plugin(|_r, _h, _s| async move { Ok(sharedos_envelope::runtime::escalate("need a human")) });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Failed, "tool_unavailable", None);
    kernel.refuse_admission.replace(Some(sharedos_model::codes::ReasonCode::NoMatchingGrant));
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_ending(&result, ExecutionStatus::Denied, "no_matching_grant", None);
}
