//! Escalation and execution admission (K78, K84).

use crate::support;

use serde_json::json;
use sharedos_authz::required::describe_required_authority;
use sharedos_model::address::Address;
use sharedos_model::audit::{AuditOutcome, AuditType};
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_model::tool::ToolStatus;
use sharedos_port::signal::AbortSignal;
use sharedos_port::turn_kernel::TurnKernel;
use sharedos_testkit::call::call;
use sharedos_world::constants::{agent, owner, NOW};
use support::*;

fn escalation_grant() -> sharedos_model::capability::Grant {
    grant("grant-escalation", "sharedos", &["escalation"], &["request"])
}

#[tokio::test]
async fn k78_record_escalation_writes_one_pending_record_and_grants_nothing() {
    let (grants, sink) = (Grants::of(&[escalation_grant()]), Sink::new());
    let kernel = builder(&grants, &sink).escalation_tool().build().unwrap();
    let escalation =
        kernel.record_escalation(&ctx(), "need write access", "exec-1", &AbortSignal::new()).await.unwrap();
    assert_eq!(
        (escalation.reviewer.clone(), escalation.status.as_str(), escalation.requested_at.as_str()),
        (owner(), "pending", NOW)
    );
    let events = sink.of(AuditType::EscalationRequested);
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(
        (event.outcome, event.reason.as_deref(), event.operation_id.as_deref()),
        (AuditOutcome::Escalated, Some("escalation_requested"), Some("exec-1"))
    );
    let metadata = event.metadata.clone().unwrap();
    assert_eq!((metadata["reviewerAssumed"].clone(), metadata["resolution"].clone()), (json!(true), json!("pending")));
    assert_eq!(metadata["reviewer"], json!(owner()));
    assert_eq!(sink.count(AuditType::AuthorizationChecked), 0, "escalating decides nothing");
}

#[tokio::test]
async fn k78_a_requested_authority_is_re_minted_from_the_context() {
    let (grants, sink) = (Grants::of(&[]), Sink::new());
    let kernel = builder(&grants, &sink).build().unwrap();
    let requirement = Requirement {
        resource: ResourceRef::owned("files", &["Workspace", "policy.md"], &owner()),
        action: "replace".into(),
    };
    let described = describe_required_authority(&ctx(), &requirement).unwrap();
    let mut forged = described.clone();
    forged.requester = Address::agent("agent-eve");
    forged.id = "forged".into();
    forged.namespace_id = "another-world".into();
    forged.owner = Address::human("user-eve");
    forged.requested_at = "2020-01-01T00:00:00.000Z".into();
    let escalation = kernel
        .record_escalation_with(&ctx(), "please", Some(forged), Some("exec-1"), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(escalation.requested_authority, Some(described.clone()));
    assert_eq!(sink.last(AuditType::EscalationRequested).requested_authority, Some(described));
}

#[tokio::test]
async fn k78_a_sink_failure_does_not_change_the_escalation() {
    let (grants, sink) = (Grants::of(&[]), Sink::new());
    sink.fail_on(AuditType::EscalationRequested);
    let kernel = builder(&grants, &sink).build().unwrap();
    let escalation = kernel.record_escalation(&ctx(), "why", "exec-1", &AbortSignal::new()).await;
    assert!(escalation.is_ok());
}

#[tokio::test]
async fn the_escalation_affordance_is_catalogued_only_with_its_grant_and_never_executes() {
    let (grants, sink) = (Grants::of(&[escalation_grant()]), Sink::new());
    let kernel = builder(&grants, &sink).escalation_tool().build().unwrap();
    let signal = AbortSignal::new();
    let listed = kernel.list_tools(&ctx(), &signal).await.unwrap();
    assert_eq!(listed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), vec!["sharedos.escalate"]);
    let forwarded =
        kernel.invoke_tool(&ctx(), &call("c1", "sharedos.escalate", json!({"reason": "help"})), &signal).await.unwrap();
    assert_eq!(
        (forwarded.status(), forwarded.error().unwrap().code.as_str()),
        (ToolStatus::Failed, "escalation_not_terminated")
    );
    let (grants, sink) = (Grants::of(&[]), Sink::new());
    let withheld = builder(&grants, &sink).escalation_tool().build().unwrap();
    assert!(withheld.list_tools(&ctx(), &signal).await.unwrap().is_empty());
}

#[tokio::test]
async fn k84_admission_needs_the_agents_execution_capability_owned_by_the_context_owner() {
    let invoke = grant("grant-turn", "sharedos.execution", &["agent", "agent-mallory"], &["invoke"]);
    let mut foreign = grant("grant-foreign", "sharedos.execution", &["agent", "agent-mallory"], &["invoke"]);
    foreign.capabilities[0].resource.owner = Some(Address::human("user-mallory"));
    let (grants, sink) = (Grants::of(&[foreign.clone()]), Sink::new());
    let kernel = builder(&grants, &sink).build().unwrap();
    let signal = AbortSignal::new();
    let denied = kernel.admit_turn(&ctx(), &agent(), &signal).await.unwrap();
    assert_eq!(denied.reason_code.as_str(), "no_matching_grant");
    let checked = sink.last(AuditType::AuthorizationChecked);
    assert_eq!((checked.outcome, checked.consumed), (AuditOutcome::Denied, Some(true)));
    let resource = checked.resource.unwrap();
    assert_eq!(
        (resource.namespace.as_str(), resource.path),
        ("sharedos.execution", vec!["agent".to_string(), "agent-mallory".to_string()])
    );
    let (grants, sink) = (Grants::of(&[invoke]), Sink::new());
    let kernel = builder(&grants, &sink).build().unwrap();
    let allowed = kernel.admit_turn(&ctx(), &agent(), &signal).await.unwrap();
    assert_eq!((allowed.allowed, allowed.matched_grant_id.as_deref()), (true, Some("grant-turn")));
}

#[tokio::test]
async fn admission_with_unavailable_authority_is_a_recorded_fail_closed_denial() {
    let (grants, sink) = (Grants::failing(), Sink::new());
    let kernel = builder(&grants, &sink).build().unwrap();
    let decision = kernel.admit_turn(&ctx(), &agent(), &AbortSignal::new()).await.unwrap();
    assert_eq!(decision.reason_code.as_str(), "authority_unavailable");
    let checked = sink.last(AuditType::AuthorizationChecked);
    assert_eq!((checked.reason.as_deref(), checked.fail_closed), (Some("authority_unavailable"), Some(true)));
}

#[tokio::test]
async fn k78_a_reason_must_be_1_to_512_characters_and_nothing_is_recorded_otherwise() {
    let (grants, sink) = (Grants::of(&[]), Sink::new());
    let kernel = builder(&grants, &sink).build().unwrap();
    let signal = AbortSignal::new();
    let longest = "é".repeat(512);
    assert!(kernel.record_escalation(&ctx(), &longest, "exec-1", &signal).await.is_ok(), "512 characters");
    assert!(kernel.record_escalation(&ctx(), "a", "exec-1", &signal).await.is_ok(), "one character");
    assert_eq!(sink.count(AuditType::EscalationRequested), 2);
    for refused in [String::new(), "é".repeat(513)] {
        let answer = kernel.record_escalation(&ctx(), &refused, "exec-1", &signal).await;
        assert!(answer.is_err(), "{} characters", refused.chars().count());
    }
    assert_eq!(sink.count(AuditType::EscalationRequested), 2, "a refused reason records nothing");
}

#[tokio::test]
async fn k38_the_affordance_s_parser_takes_only_a_reason_of_1_to_512_characters() {
    let (grants, sink) = (Grants::of(&[escalation_grant()]), Sink::new());
    let kernel = builder(&grants, &sink).escalation_tool().build().unwrap();
    let signal = AbortSignal::new();
    let code = |arguments: serde_json::Value| {
        let kernel = &kernel;
        let signal = &signal;
        async move {
            let result = kernel.invoke_tool(&ctx(), &call("c1", "sharedos.escalate", arguments), signal).await.unwrap();
            result.error().unwrap().code.clone()
        }
    };
    for refused in [
        json!({}),
        json!({"reason": ""}),
        json!({"reason": "é".repeat(513)}),
        json!({"reason": "help", "grant": "anything"}),
    ] {
        assert_eq!(code(refused.clone()).await, "invalid_tool_arguments", "{refused}");
    }
    assert_eq!(code(json!({"reason": "é".repeat(512)})).await, "escalation_not_terminated");
}
