//! The two audit paths and what records carry (K67–K72, K74).

use crate::support;

use serde_json::json;
use sharedos_kernel::ports::AuditWriteError;
use sharedos_model::audit::{AuditOutcome, AuditType, Source};
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::tool::ToolStatus;
use sharedos_port::audit::AuditEffect;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use sharedos_port::turn_kernel::{RefusedCall, TurnEnd, TurnKernel};
use sharedos_testkit::call::call;
use sharedos_world::constants::{agent, owner, NOW};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use support::*;

fn outage_effect(outcome: Result<impl std::fmt::Debug, KernelError>) -> AuditEffect {
    match outcome {
        Err(KernelError::AuditUnavailable(outage)) => outage.effect,
        other => panic!("expected an audit outage, got {other:?}"),
    }
}

#[tokio::test]
async fn k67_decisions_state_outcome_resource_action_hash_and_reason() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    let signal = AbortSignal::new();
    kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace/a"})), &signal).await.unwrap();
    kernel.invoke_tool(&ctx(), &call("c2", "files.read", json!({"path": "Vault/a"})), &signal).await.unwrap();
    let checked = sink.of(AuditType::AuthorizationChecked);
    let (allowed, denied) = (&checked[0], &checked[1]);
    assert_eq!((allowed.outcome, allowed.reason.as_deref(), allowed.fail_closed), (AuditOutcome::Allowed, None, None));
    assert_eq!(
        (denied.outcome, denied.reason.as_deref(), denied.fail_closed),
        (AuditOutcome::Denied, Some("no_matching_grant"), None)
    );
    for event in &checked {
        assert!(event.authority_hash.is_some() && event.resource.is_some());
        assert_eq!(event.action.as_deref(), Some("read"));
        assert_eq!(event.resource.as_ref().unwrap().owner, Some(owner()));
    }
    let mut bounded = read_grant();
    bounded.constraints.max_uses = Some(3);
    let (grants, sink) = (Grants::of(&[bounded]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[]);
    let _ = kernel.admit_turn(&ctx(), &agent(), &signal).await.unwrap();
    let mut requirement = TestTool::new("x", "read").definition.required_capability.clone();
    requirement.resource.path = vec!["Workspace".into()];
    let _ = kernel.authorize(&ctx(), &requirement, &signal).await.unwrap();
    let infra = sink.last(AuditType::AuthorizationChecked);
    assert_eq!((infra.reason.as_deref(), infra.fail_closed), (Some("usage_store_unavailable"), Some(true)));
}

#[tokio::test]
async fn k68_a_failing_pre_effect_write_refuses_and_nothing_runs() {
    for kind in [AuditType::AuthorityResolved, AuditType::AuthorizationChecked] {
        let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
        sink.fail_on(kind);
        let hook_calls = Rc::new(RefCell::new(0));
        let seen = hook_calls.clone();
        let kernel = builder(&grants, &sink)
            .tool(tool.clone())
            .on_audit_error(Rc::new(move |_, _| *seen.borrow_mut() += 1))
            .build()
            .unwrap();
        let outcome = kernel
            .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
            .await;
        assert_eq!(outage_effect(outcome), AuditEffect::None, "{kind:?}");
        assert_eq!(tool.calls(), 0);
        assert_eq!(sink.count(AuditType::ToolInvoked), 0);
        assert_eq!(*hook_calls.borrow(), 0, "pre-effect failures are not reported to the hook");
    }
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    sink.fail_on(AuditType::ToolCatalogListed);
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    assert_eq!(outage_effect(kernel.list_tools(&ctx(), &AbortSignal::new()).await), AuditEffect::None);
}

#[tokio::test]
async fn k69_a_failing_post_effect_write_never_changes_the_result() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    sink.fail_on(AuditType::ToolInvoked);
    sink.fail_on(AuditType::TurnEnded);
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let seen = dropped.clone();
    let kernel = builder(&grants, &sink)
        .tool(tool.clone())
        .on_audit_error(Rc::new(move |event, error| seen.borrow_mut().push((event.kind, error.clone()))))
        .build()
        .unwrap();
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(result.status(), ToolStatus::Succeeded);
    let end = TurnEnd {
        execution_id: "exec-1".into(),
        status: ExecutionStatus::Succeeded,
        reason_code: None,
        ended_by: None,
        fail_closed: false,
    };
    kernel.record_turn_end(&ctx(), &end).await;
    let kinds: Vec<_> = dropped.borrow().iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, vec![AuditType::ToolInvoked, AuditType::TurnEnded]);
}

#[tokio::test(start_paused = true)]
async fn k69_a_hanging_post_effect_write_is_bounded_by_the_timeout() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    sink.hang.borrow_mut().insert(AuditType::ToolInvoked);
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let seen = dropped.clone();
    let kernel = builder(&grants, &sink)
        .tool(tool)
        .audit_write_timeout_ms(250)
        .on_audit_error(Rc::new(move |_, error| seen.borrow_mut().push(error.clone())))
        .build()
        .unwrap();
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(result.status(), ToolStatus::Succeeded);
    assert_eq!(*dropped.borrow(), vec![AuditWriteError::TimedOut(250)]);
}

#[tokio::test]
async fn k70_every_record_has_a_fresh_id() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    let signal = AbortSignal::new();
    let scope = kernel.open_turn_authority(&ctx(), &signal).await.unwrap();
    for _ in 0..3 {
        kernel.invoke_tool(&ctx(), &call("same", "files.read", json!({"path": "Workspace"})), &signal).await.unwrap();
    }
    scope.close();
    let ids: BTreeSet<String> = sink.events.borrow().iter().map(|e| e.id.clone()).collect();
    assert_eq!(ids.len(), sink.events.borrow().len());
    assert_eq!(sink.count(AuditType::AuthorizationChecked), 3);
}

#[tokio::test]
async fn k71_envelope_refusals_are_recorded_as_denied_with_source_envelope() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[]);
    let refused = RefusedCall {
        call_id: "c9".into(),
        tool: "admin.grant.issue".into(),
        reason_code: "tool_unavailable".into(),
        cause: Some("not_offered".into()),
    };
    kernel.record_refused_call(&ctx(), &refused).await;
    let event = sink.last(AuditType::ToolInvoked);
    assert_eq!(
        (event.outcome, event.source, event.reason.as_deref(), event.cause.as_deref(), event.operation_id.as_deref()),
        (AuditOutcome::Denied, Some(Source::Envelope), Some("tool_unavailable"), Some("not_offered"), Some("c9"))
    );
}

#[tokio::test]
async fn k72_turn_ended_records_cancelled_as_failed_and_carries_no_source() {
    let (grants, sink) = (Grants::of(&[]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[]);
    let cancelled = TurnEnd {
        execution_id: "exec-1".into(),
        status: ExecutionStatus::Cancelled,
        reason_code: None,
        ended_by: Some(Source::Envelope),
        fail_closed: false,
    };
    kernel.record_turn_end(&ctx(), &cancelled).await;
    let failed = TurnEnd {
        execution_id: "exec-2".into(),
        status: ExecutionStatus::Failed,
        reason_code: Some("audit_unavailable".into()),
        ended_by: Some(Source::Envelope),
        fail_closed: true,
    };
    kernel.record_turn_end(&ctx(), &failed).await;
    let events = sink.of(AuditType::TurnEnded);
    assert_eq!(events.len(), 2);
    assert_eq!(
        (events[0].outcome, events[0].reason.as_deref(), events[0].ended_by),
        (AuditOutcome::Failed, Some("turn_cancelled"), None)
    );
    assert_eq!(
        (events[1].ended_by, events[1].fail_closed, events[1].operation_id.as_deref()),
        (Some(Source::Envelope), Some(true), Some("exec-2"))
    );
    assert!(events.iter().all(|e| e.source.is_none()));
}

#[tokio::test]
async fn k74_records_never_hold_arguments_results_payloads_or_thrown_text() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let transport = Transport::new();
    let kernel = builder(&grants, &sink)
        .tool(tool.clone())
        .message_transport(transport)
        .message_router(Router::new())
        .build()
        .unwrap();
    let signal = AbortSignal::new();
    // The result's output contains the secret; so do the arguments below.
    kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": format!("Workspace/{SECRET}")})), &signal)
        .await
        .unwrap();
    kernel.invoke_tool(&ctx(), &call("c2", "files.read", json!({"wrong": SECRET})), &signal).await.unwrap();
    tool.behave(Behaviour::Throw);
    kernel.invoke_tool(&ctx(), &call("c3", "files.read", json!({"path": "Workspace"})), &signal).await.unwrap();
    let envelope = json!({"version": "1", "id": "m1", "sender": agent(), "receiver": owner(), "purpose": "probe",
                          "payload": {"note": SECRET}, "traceId": "trace-1", "createdAt": NOW});
    kernel.send_message(&ctx(), &envelope, &signal).await.unwrap();
    let events = sink.text();
    let leaks: Vec<_> = sink
        .events
        .borrow()
        .iter()
        .filter(|e| serde_json::to_string(e).unwrap().contains(SECRET))
        .map(|e| e.kind)
        .collect();
    // The only place the secret may appear is a requirement path segment the
    // tool itself derived (a resource, not an argument dump).
    assert!(leaks.iter().all(|k| matches!(k, AuditType::AuthorizationChecked | AuditType::ToolInvoked)), "{events}");
    assert!(!events.contains("\"content\"") && !events.contains("\"note\"") && !events.contains("\"wrong\""));
}
