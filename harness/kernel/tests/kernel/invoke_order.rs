//! `invokeTool` in its order (K5, K34–K45).

use crate::support;

use serde_json::json;
use sharedos_model::audit::{AuditOutcome, AuditType, Source};
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_model::tool::ToolStatus;
use sharedos_port::audit::AuditEffect;
use sharedos_port::error::KernelError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::call::call;
use std::cell::RefCell;
use std::rc::Rc;
use support::*;

fn code(result: &sharedos_model::tool::ToolResult) -> &str {
    &result.error().expect("a refusal").code
}

#[tokio::test]
async fn k34_trace_mismatch_is_denied_before_authority_is_consulted() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let mut c = call("c1", "files.read", json!({"path": "Workspace/a.md"}));
    c.trace_id = "trace-other".into();
    let result = kernel.invoke_tool(&ctx(), &c, &AbortSignal::new()).await.unwrap();
    assert_eq!((result.status(), code(&result)), (ToolStatus::Denied, "trace_mismatch"));
    assert_eq!(grants.loads.get(), 0);
    assert_eq!(sink.count(AuditType::AuthorityResolved), 0);
    assert_eq!(sink.last(AuditType::ToolInvoked).reason.as_deref(), Some("trace_mismatch"));
}

#[tokio::test]
async fn k5_unavailable_authority_denies_fail_closed_before_any_handler_runs() {
    let (grants, sink, tool) = (Grants::failing(), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!((result.status(), code(&result)), (ToolStatus::Denied, "authority_unavailable"));
    assert_eq!((tool.calls(), tool.parsed.get()), (0, 0));
    let invoked = sink.last(AuditType::ToolInvoked);
    assert_eq!(invoked.fail_closed, Some(true));
    let resolved = sink.last(AuditType::AuthorityResolved);
    assert_eq!(resolved.outcome, AuditOutcome::Failed);
    assert_eq!(resolved.metadata.unwrap()["authority"], "grant_source_failed");
}

#[tokio::test]
async fn k35_unregistered_tool_is_unavailable_without_a_decision() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[]);
    let result =
        kernel.invoke_tool(&ctx(), &call("c1", "admin.grant.issue", json!({})), &AbortSignal::new()).await.unwrap();
    assert_eq!((result.status(), code(&result)), (ToolStatus::Denied, "tool_unavailable"));
    assert_eq!(sink.count(AuditType::AuthorizationChecked), 0);
    assert_eq!(sink.last(AuditType::ToolInvoked).cause.as_deref(), Some("not_registered"));
}

#[tokio::test]
async fn k36_disabled_namespace_is_unavailable_even_when_granted() {
    let (grants, sink) = (Grants::of(&[grant("grant-purge", "files", &["Workspace"], &["purge"])]), Sink::new());
    let tool = TestTool::with(definition("files.purge", "files.admin", "files", "purge"));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.purge", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(code(&result), "tool_unavailable");
    assert_eq!(tool.calls(), 0);
    assert_eq!(sink.count(AuditType::AuthorizationChecked), 0);
    assert_eq!(sink.last(AuditType::ToolInvoked).cause.as_deref(), Some("namespace_disabled"));
}

#[tokio::test]
async fn k37_undiscoverable_tool_records_a_denied_decision_for_its_ceiling() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.delete", "delete"));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.delete", json!({"path": "Workspace/a"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(code(&result), "tool_unavailable");
    assert_eq!(tool.parsed.get(), 0, "discovery precedes parsing");
    let checked = sink.last(AuditType::AuthorizationChecked);
    assert_eq!(checked.outcome, AuditOutcome::Denied);
    assert_eq!(checked.consumed, Some(false));
    assert_eq!(checked.action.as_deref(), Some("delete"));
    assert_eq!(checked.resource.unwrap().path, Vec::<String>::new());
    assert_eq!(checked.operation_id.as_deref(), Some("c1"));
    assert_eq!(sink.last(AuditType::ToolInvoked).cause.as_deref(), Some("no_matching_grant"));
}

#[tokio::test]
async fn k38_arguments_are_parsed_before_authorization() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result =
        kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"nopath": 1})), &AbortSignal::new()).await.unwrap();
    assert_eq!((result.status(), code(&result)), (ToolStatus::Failed, "invalid_tool_arguments"));
    assert_eq!(sink.count(AuditType::AuthorizationChecked), 0);
    assert_eq!(tool.calls(), 0);
}

#[tokio::test]
async fn k39_the_requirement_and_the_invocation_share_the_parsed_call() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "/Workspace//a.md"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(result.status(), ToolStatus::Succeeded);
    let seen = tool.invoked.borrow()[0].clone();
    assert_eq!(seen.arguments["path"], json!(["Workspace", "a.md"]));
    let checked = sink.last(AuditType::AuthorizationChecked);
    assert_eq!(checked.resource.unwrap().path, vec!["Workspace".to_string(), "a.md".to_string()]);
}

#[tokio::test]
async fn k40_a_foreign_owner_is_a_recorded_invalid_request_before_the_ceiling_check() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.fetch", "read"));
    // Foreign owner AND outside the ceiling (other namespace): the world check must win.
    tool.resolve_to(Ok(Requirement {
        resource: ResourceRef::owned(
            "vault",
            &["secrets.md"],
            &sharedos_model::address::Address::human("user-mallory"),
        ),
        action: "read".into(),
    }));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.fetch", json!({"path": "x"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!((result.status(), code(&result)), (ToolStatus::Denied, "invalid_request"));
    let checked = sink.last(AuditType::AuthorizationChecked);
    assert_eq!(
        (checked.outcome, checked.reason.as_deref(), checked.consumed),
        (AuditOutcome::Denied, Some("invalid_request"), Some(false))
    );
    assert_eq!(tool.calls(), 0);
}

#[tokio::test]
async fn k41_a_requirement_outside_the_ceiling_fails_without_consulting_grants() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.index", "read"));
    let mut declared = tool.definition.required_capability.clone();
    declared.resource.path = vec!["Workspace".into()];
    let tool = TestTool::with(sharedos_model::tool::ToolDefinition {
        required_capability: declared,
        ..sharedos_model::tool::ToolDefinition::clone(&tool.definition)
    });
    tool.resolve_to(Ok(Requirement {
        resource: ResourceRef {
            namespace: "files".into(),
            path: vec!["Vault".into(), "secrets.md".into()],
            owner: None,
        },
        action: "read".into(),
    }));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.index", json!({"path": "x"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!((result.status(), code(&result)), (ToolStatus::Failed, "invalid_tool_requirement"));
    assert_eq!(sink.count(AuditType::AuthorizationChecked), 0);
    assert_eq!(tool.calls(), 0);
}

#[tokio::test]
async fn k41_a_different_action_is_also_a_ceiling_escape() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    tool.resolve_to(Ok(Requirement {
        resource: ResourceRef { namespace: "files".into(), path: vec!["Workspace".into()], owner: None },
        action: "delete".into(),
    }));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result =
        kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "x"})), &AbortSignal::new()).await.unwrap();
    assert_eq!(code(&result), "invalid_tool_requirement");
}

#[tokio::test]
async fn k42_the_exact_requirement_is_authorized_and_consumed() {
    let mut ledger = grant("grant-ledger", "files", &["Workspace", "ledger"], &["read"]);
    ledger.constraints.max_uses = Some(1);
    let scratch = grant("grant-scratch", "files", &["Workspace", "scratch"], &["read"]);
    let (grants, sink, tool) = (Grants::of(&[ledger, scratch]), Sink::new(), TestTool::new("files.read", "read"));
    let usage = Rc::new(sharedos_authz::memory::InMemoryUsage::new());
    let kernel = builder(&grants, &sink).usage_store(usage.clone()).tool(tool.clone()).build().unwrap();
    let signal = AbortSignal::new();
    let first = kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace/ledger/e.md"})), &signal)
        .await
        .unwrap();
    assert_eq!(first.status(), ToolStatus::Succeeded);
    assert_eq!(usage.spent("world-test", "grant-ledger"), 1);
    let allowed = sink.last(AuditType::AuthorizationChecked);
    assert_eq!(
        (allowed.outcome, allowed.consumed, allowed.grant_id.as_deref()),
        (AuditOutcome::Allowed, Some(true), Some("grant-ledger"))
    );
    let outside = kernel
        .invoke_tool(&ctx(), &call("c2", "files.read", json!({"path": "Workspace/policy.md"})), &signal)
        .await
        .unwrap();
    assert_eq!((outside.status(), code(&outside)), (ToolStatus::Denied, "no_matching_grant"));
    assert_eq!(sink.last(AuditType::ToolInvoked).reason.as_deref(), Some("no_matching_grant"));
}

#[tokio::test]
async fn k43_a_result_naming_another_call_is_invalid() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.describe", "read"));
    tool.behave(Behaviour::WrongCallId);
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.describe", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(
        (result.status(), code(&result), result.call_id.as_str()),
        (ToolStatus::Failed, "invalid_tool_result", "c1")
    );
    assert_eq!(sink.last(AuditType::ToolInvoked).grant_id.as_deref(), Some("grant-read"));
}

#[tokio::test]
async fn k44_a_handler_throw_fails_and_its_text_reaches_only_the_hook() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    tool.behave(Behaviour::Throw);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let hook_seen = seen.clone();
    let kernel = builder(&grants, &sink)
        .tool(tool.clone())
        .on_provider_error(Rc::new(move |e| hook_seen.borrow_mut().push(e.detail.clone())))
        .build()
        .unwrap();
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!((result.status(), code(&result)), (ToolStatus::Failed, "tool_execution_failed"));
    assert!(!serde_json::to_string(&result).unwrap().contains(SECRET));
    assert!(!sink.text().contains(SECRET));
    assert_eq!(*seen.borrow(), vec![SECRET.to_string()]);
}

#[tokio::test]
async fn k45_the_three_unavailable_situations_look_identical_to_the_caller() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let disabled = TestTool::with(definition("files.purge", "files.admin", "files", "read"));
    let hidden = TestTool::new("files.delete", "delete");
    let kernel = kernel_with(&grants, &sink, &[disabled, hidden]);
    let signal = AbortSignal::new();
    let mut errors = Vec::new();
    for (id, tool) in [("c1", "admin.grant.issue"), ("c2", "files.purge"), ("c3", "files.delete")] {
        let result = kernel.invoke_tool(&ctx(), &call(id, tool, json!({"path": "Workspace"})), &signal).await.unwrap();
        assert_eq!(result.status(), ToolStatus::Denied);
        errors.push(result.error().cloned().unwrap());
    }
    assert!(errors.iter().all(|e| e == &errors[0]));
    let causes: Vec<_> = sink.of(AuditType::ToolInvoked).into_iter().map(|e| e.cause.unwrap()).collect();
    assert_eq!(causes, vec!["not_registered", "namespace_disabled", "no_matching_grant"]);
}

#[tokio::test]
async fn interrupted_is_recorded_when_the_caller_aborts_inside_the_port() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    tool.behave(Behaviour::WaitForAbort);
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let signal = AbortSignal::new();
    let c = call("c1", "files.read", json!({"path": "Workspace"}));
    let context = ctx();
    let invoke = kernel.invoke_tool(&context, &c, &signal);
    let abort = async {
        tokio::task::yield_now().await;
        signal.abort(AbortReason::HostCancelled);
    };
    let (outcome, ()) = tokio::join!(invoke, abort);
    assert_eq!(outcome, Err(KernelError::Aborted(AbortReason::HostCancelled)));
    let invoked = sink.last(AuditType::ToolInvoked);
    assert_eq!((invoked.outcome, invoked.reason.as_deref()), (AuditOutcome::Interrupted, Some("operation_aborted")));
}

#[tokio::test]
async fn an_abort_before_the_port_writes_no_outcome() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let signal = AbortSignal::new();
    signal.abort(AbortReason::Timeout);
    let outcome = kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &signal).await;
    assert_eq!(outcome, Err(KernelError::Aborted(AbortReason::Timeout)));
    assert_eq!(sink.count(AuditType::ToolInvoked), 0);
    assert_eq!(tool.calls(), 0);
}

#[tokio::test]
async fn an_audit_outage_met_inside_the_port_is_interrupted_with_unknown_effect() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    tool.behave(Behaviour::AuditOutage);
    let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
    let outcome =
        kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new()).await;
    match outcome {
        Err(KernelError::AuditUnavailable(outage)) => assert_eq!(outage.effect, AuditEffect::Unknown),
        other => panic!("expected an audit outage, got {other:?}"),
    }
    let invoked = sink.last(AuditType::ToolInvoked);
    assert_eq!((invoked.outcome, invoked.reason.as_deref()), (AuditOutcome::Interrupted, Some("audit_unavailable")));
    assert_eq!(invoked.source, Some(Source::Kernel));
}
