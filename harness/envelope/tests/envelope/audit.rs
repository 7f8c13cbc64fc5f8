//! The envelope's own audit: E96–E102 (E101 over the reference kernel).

use crate::support;

use serde_json::{json, Value};
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::host::ToolInvocationOptions;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_envelope::runtime::{complete, escalate, fail};
use sharedos_model::address::Address;
use sharedos_model::audit::{AuditType, Source};
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{ExecutionOptions, ExecutionStatus};
use sharedos_model::tool::ProtocolError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::call::{call, TRACE};
use std::future::pending;
use support::*;

fn tools() -> Vec<sharedos_model::tool::ToolDefinition> {
    vec![read_tool("files.read"), escalate_tool()]
}

#[tokio::test(start_paused = true)]
async fn e96_e98_every_ending_writes_exactly_one_turn_ended() {
    let kernel = FakeKernel::with_tools(tools());
    let mut expected = vec![];
    // context denial
    let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
    let exec = executor(&kernel, &p, options());
    let mut req = request(tools());
    req.context.actor = Address::agent("x");
    let _ = run(&exec, req).await;
    expected.push((ExecutionStatus::Denied, Some("actor_mismatch"), None));
    // pre-aborted
    let signal = AbortSignal::new();
    signal.abort(AbortReason::HostCancelled);
    let _ = exec.execute(request(tools()), ExecuteOptions { signal: Some(signal), on_event: None }).await.unwrap();
    expected.push((ExecutionStatus::Cancelled, Some("turn_cancelled"), None));
    // admission denial
    kernel.refuse_admission.replace(Some(ReasonCode::NoMatchingGrant));
    let _ = run(&exec, request(tools())).await;
    kernel.refuse_admission.replace(None);
    expected.push((ExecutionStatus::Denied, Some("no_matching_grant"), None));
    // succeeded, escalated, runtime fail, envelope fail
    let _ = run(&exec, request(tools())).await;
    expected.push((ExecutionStatus::Succeeded, None, None));
    for (script, row) in [
        (0, (ExecutionStatus::Escalated, None, None)),
        (1, (ExecutionStatus::Failed, Some("model_refused"), Some(Source::Runtime))),
        (2, (ExecutionStatus::Failed, Some("runtime_failed"), Some(Source::Envelope))),
    ] {
        let p = plugin(move |_r, _h, _s| async move {
            match script {
                0 => Ok(escalate("ask")),
                1 => Ok(fail(ProtocolError::new("model_refused", "no"))),
                _ => Err(RuntimeFailure::message("boom")),
            }
        });
        let _ = run(&executor(&kernel, &p, options()), request(tools())).await;
        expected.push(row);
    }
    let ends: Vec<_> =
        kernel.turn_ends.borrow().iter().map(|e| (e.status, e.reason_code.clone(), e.ended_by)).collect();
    let expected: Vec<_> = expected.into_iter().map(|(s, r, b)| (s, r.map(str::to_string), b)).collect();
    assert_eq!(ends, expected);
    assert_eq!(kernel.op_count("turn_end"), 7);
    assert!(kernel.turn_ends.borrow().iter().all(|e| !e.fail_closed));
}

#[tokio::test(start_paused = true)]
async fn e97_a_cancelled_turn_is_recorded_failed_turn_cancelled_at_its_completed_at() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, _h, _s| async move { pending().await });
    let mut req = request(tools());
    req.options = Some(ExecutionOptions { timeout_ms: Some(4_000), ..ExecutionOptions::default() });
    let result = run(&executor(&kernel, &p, options()), req).await;
    let ended = kernel.trail("turn.ended");
    assert_eq!((ended[0].outcome.as_str(), ended[0].reason.as_deref()), ("failed", Some("turn_cancelled")));
    assert_eq!(kernel.turn_end_contexts.borrow()[0].now, result.completed_at);
    assert_eq!(kernel.turn_ends.borrow()[0].ended_by, None);
}

#[tokio::test(start_paused = true)]
async fn e99_every_envelope_refusal_is_audited_once_with_the_same_code() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        let mut codes = vec![];
        codes.push(
            host.invoke_tool(call("a", "files.nope", json!({})), ToolInvocationOptions::none())
                .await?
                .error()
                .unwrap()
                .code
                .clone(),
        );
        codes.push(
            host.invoke_tool(call("b", "files.read", json!({})), ToolInvocationOptions::at_step(9))
                .await?
                .error()
                .unwrap()
                .code
                .clone(),
        );
        codes.push(
            host.invoke_tool(call("c", "files.read", json!({})), ToolInvocationOptions::none())
                .await?
                .error()
                .unwrap()
                .code
                .clone(),
        );
        sleep_ms(119_500).await;
        codes.push(
            host.invoke_tool(call("d", "files.read", json!({})), ToolInvocationOptions::none())
                .await?
                .error()
                .unwrap()
                .code
                .clone(),
        );
        Err(RuntimeFailure::message(codes.join(",")))
    });
    let mut req = request(tools());
    req.options = Some(ExecutionOptions { max_steps: Some(2), max_tool_calls: Some(1), ..ExecutionOptions::default() });
    let _ = run(&executor(&kernel, &p, grace(1_000)), req).await;
    let refused: Vec<_> =
        kernel.trail("tool.invoked").into_iter().map(|a| (a.reason.unwrap(), a.source, a.outcome)).collect();
    let expected = ["tool_unavailable", "step_limit_exceeded", "tool_call_limit_exceeded", "turn_draining"];
    assert_eq!(refused.len(), 4);
    for (row, code) in refused.iter().zip(expected) {
        assert_eq!((row.0.as_str(), row.1, row.2.as_str()), (code, "envelope", "denied"));
    }
}

#[tokio::test(start_paused = true)]
async fn e100_an_entered_then_aborted_call_is_interrupted_not_failed_or_refused() {
    let kernel = FakeKernel::with_tools(tools());
    kernel.handle("files.read", Handler::slow(10_000, Answer::Succeed));
    let p = plugin(|_r, host, _s| async move {
        host.invoke_tool(call("a", "files.read", json!({})), ToolInvocationOptions::none()).await?;
        Ok(complete(Value::Null))
    });
    let mut req = request(tools());
    req.options = Some(ExecutionOptions { timeout_ms: Some(1_000), ..ExecutionOptions::default() });
    let _ = run(&executor(&kernel, &p, options()), req).await;
    let invoked = kernel.trail("tool.invoked");
    assert_eq!(invoked.len(), 1);
    assert_eq!((invoked[0].outcome.as_str(), invoked[0].source), ("interrupted", "kernel"));
    assert!(kernel.refused.borrow().is_empty());
}

#[tokio::test(start_paused = true)]
async fn e102_the_catalogue_is_listed_once_per_turn_and_calls_use_it() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, host, _s| async move {
        for i in 0..3 {
            host.invoke_tool(call(&format!("c{i}"), "files.read", json!({})), ToolInvocationOptions::none()).await?;
        }
        Ok(complete(json!(null)))
    });
    let _ = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_eq!(kernel.op_count("list"), 1);
    assert_eq!(kernel.op_count("invoke:"), 3);
    // Each call carries the operation instant.
    assert!(kernel.invoke_contexts.borrow().iter().all(|c| c.trace_id == TRACE && c.now.starts_with("2026-01-01")));
}

#[tokio::test(start_paused = true)]
async fn e101_authority_admission_and_catalogue_records_share_one_authority_hash() {
    let world = support::reference::Reference::new();
    // A second load in the turn would see the store without grant-read, and
    // so name another snapshot.
    world.fixtures.grant_source.after_loads(1, |source| {
        source.revoke("grant-read", sharedos_world::constants::NOW);
    });
    let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
    assert_eq!(world.run(p, 1).await.status, ExecutionStatus::Succeeded);
    let trail = world.trail(1);
    let hashes = |kind: AuditType| -> Vec<Option<String>> {
        trail.iter().filter(|e| e.kind == kind).map(|e| e.authority_hash.clone()).collect()
    };
    let resolved = hashes(AuditType::AuthorityResolved);
    assert_eq!(resolved.len(), 1, "the turn loaded its authority once");
    assert!(resolved[0].is_some());
    let admission: Vec<Option<String>> = trail
        .iter()
        .filter(|e| e.kind == AuditType::AuthorizationChecked)
        .filter(|e| e.resource.as_ref().is_some_and(|r| r.namespace == "sharedos.execution"))
        .map(|e| e.authority_hash.clone())
        .collect();
    assert_eq!(admission, resolved);
    assert_eq!(hashes(AuditType::ToolCatalogListed), resolved);
}
