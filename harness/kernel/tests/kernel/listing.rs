//! The catalogue, its record, and reach (K1, K25, K29, K33, K73, K85).

use crate::support;

use futures::future::LocalBoxFuture;
use serde_json::json;
use serde_json::Value;
use sharedos_kernel::listing::catalog_hash;
use sharedos_kernel::ports::PolicySource;
use sharedos_model::access::{AccessContext, Reach};
use sharedos_model::audit::{AuditOutcome, AuditType, Source};
use sharedos_model::tool::ToolDefinition;
use sharedos_port::signal::AbortSignal;
use sharedos_port::turn_kernel::TurnKernel;
use sharedos_testkit::call::call;
use std::rc::Rc;
use std::sync::Arc;
use support::*;

fn names(tools: &[Arc<ToolDefinition>]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

#[tokio::test]
async fn k1_a_context_literal_carrying_grants_is_refused() {
    let mut value = serde_json::to_value(ctx()).unwrap();
    value["grants"] = json!([read_grant()]);
    assert!(serde_json::from_value::<AccessContext>(value).is_err());
}

#[tokio::test]
async fn k25_only_enabled_and_discoverable_tools_are_listed() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let tools = [
        TestTool::new("files.read", "read"),
        TestTool::new("files.replace", "replace"),
        TestTool::with(definition("files.purge", "files.admin", "files", "read")),
    ];
    let kernel = kernel_with(&grants, &sink, &tools);
    let listed = kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap();
    assert_eq!(names(&listed), vec!["files.read"]);
    let record = sink.last(AuditType::ToolCatalogListed);
    assert_eq!((record.outcome, record.source), (AuditOutcome::Succeeded, Some(Source::Kernel)));
    let metadata = record.metadata.unwrap();
    assert_eq!(metadata["withheldCount"], 2);
    assert_eq!(metadata["enabledNamespaces"], json!(["files", "messages", "sharedos"]));
    assert_eq!(metadata["catalogHash"], catalog_hash(&listed).unwrap());
    assert!(record.authority_hash.is_some());
    assert_eq!(sink.count(AuditType::AuthorizationChecked), 0, "listing discovery is not a recorded decision");
}

#[tokio::test]
async fn k25_a_narrow_grant_makes_a_broad_ceiling_discoverable() {
    let (grants, sink) = (Grants::of(&[grant("g", "files", &["Workspace", "scratch"], &["replace"])]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.replace", "replace")]);
    assert_eq!(names(&kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap()), vec!["files.replace"]);
}

#[tokio::test]
async fn k29_no_enabled_namespaces_disables_every_tool() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    let mut context = ctx();
    context.enabled_tool_namespaces.clear();
    assert!(kernel.list_tools(&context, &AbortSignal::new()).await.unwrap().is_empty());
    let result = kernel
        .invoke_tool(&context, &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(result.error().unwrap().code, "tool_unavailable");
}

#[tokio::test]
async fn k33_unavailable_authority_lists_nothing_and_records_a_fail_closed_denial() {
    let (grants, sink) = (Grants::failing(), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    assert!(kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap().is_empty());
    let record = sink.last(AuditType::ToolCatalogListed);
    assert_eq!(
        (record.outcome, record.reason.as_deref(), record.fail_closed),
        (AuditOutcome::Denied, Some("authority_unavailable"), Some(true))
    );
    let metadata = record.metadata.unwrap();
    assert_eq!(metadata["withheldCount"], 0);
    assert_eq!(metadata["catalogHash"], catalog_hash::<ToolDefinition>(&[]).unwrap());
}

#[tokio::test]
async fn the_catalogue_hash_covers_the_published_projection_only() {
    let tool = ToolDefinition::clone(&TestTool::new("files.read", "read").definition);
    let other = ToolDefinition::clone(&TestTool::new("files.stat", "stat").definition);
    let mut widened = tool.clone();
    widened.required_capability.resource.path = vec!["Workspace".into()];
    let forward = catalog_hash(&[tool.clone(), other.clone()]).unwrap();
    assert_eq!(forward, catalog_hash(&[other.clone(), tool.clone()]).unwrap(), "order-independent");
    assert_eq!(forward, catalog_hash(&[widened, other.clone()]).unwrap(), "ceilings are never published");
    let mut described = tool;
    described.description = "changed".into();
    assert_ne!(forward, catalog_hash(&[described, other]).unwrap());
}

#[tokio::test]
async fn k73_tool_outcomes_carry_the_turns_published_catalogue_hash() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    let signal = AbortSignal::new();
    let scope = kernel.open_turn_authority(&ctx(), &signal).await.unwrap();
    let listed = kernel.list_tools(&ctx(), &signal).await.unwrap();
    kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &signal).await.unwrap();
    let refused = sharedos_port::turn_kernel::RefusedCall {
        call_id: "c2".into(),
        tool: "x".into(),
        reason_code: "tool_unavailable".into(),
        cause: Some("not_offered".into()),
    };
    kernel.record_refused_call(&ctx(), &refused).await;
    let expected = json!(catalog_hash(&listed).unwrap());
    for event in sink.of(AuditType::ToolInvoked) {
        assert_eq!(event.metadata.unwrap()["catalogHash"], expected);
    }
    scope.close();
}

#[tokio::test]
async fn k85_nothing_the_runtime_can_be_shown_carries_grants_or_issuers() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    let signal = AbortSignal::new();
    let listed = serde_json::to_string(&kernel.list_tools(&ctx(), &signal).await.unwrap()).unwrap();
    let reach = kernel.reach(&ctx(), &signal).await.unwrap();
    let reach_text = serde_json::to_string(&reach).unwrap();
    for text in [listed, reach_text] {
        assert!(
            !text.contains("grant-read") && !text.contains("agent-orchestrator") && !text.contains("issuer"),
            "{text}"
        );
    }
    match reach {
        Reach::Computed { reach } => assert_eq!(reach[0].actions, ["read"]),
        Reach::Unavailable { .. } => panic!("authority was available"),
    }
}

#[tokio::test]
async fn reach_passes_an_outage_through_instead_of_an_empty_list() {
    let (grants, sink) = (Grants::failing(), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[]);
    let reach = kernel.reach(&ctx(), &AbortSignal::new()).await.unwrap();
    assert_eq!(reach, Reach::Unavailable { reason_code: "authority_unavailable".into() });
}

#[tokio::test]
async fn k33_a_tool_withheld_for_a_fail_closed_reason_marks_the_listing_fail_closed() {
    // A bounded grant with no usage store cannot be counted: fail-closed.
    let mut bounded = read_grant();
    bounded.constraints.max_uses = Some(3);
    let (grants, sink) = (Grants::of(&[bounded]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    assert!(kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap().is_empty());
    let record = sink.last(AuditType::ToolCatalogListed);
    assert_eq!((record.outcome, record.fail_closed), (AuditOutcome::Succeeded, Some(true)));
    assert_eq!(record.metadata.unwrap()["withheldCount"], 1);
    // A tool no grant covers is withheld as an ordinary denial.
    let (grants, sink) = (Grants::of(&[]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    assert!(kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap().is_empty());
    let record = sink.last(AuditType::ToolCatalogListed);
    assert_eq!((record.outcome, record.fail_closed), (AuditOutcome::Succeeded, None));
}

/// A host policy source answering one version, or throwing.
struct Policy(Result<&'static str, &'static str>);

impl PolicySource for Policy {
    fn load<'a>(
        &'a self,
        _: &'a AccessContext,
        _: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<(Value, String), String>> {
        let answer = self.0.map(|version| (json!({}), version.to_string())).map_err(str::to_string);
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn k25_a_listing_names_the_loaded_host_policy_version_and_no_other() {
    let listed_version = |policy: Option<Policy>| async move {
        let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
        let mut builder = builder(&grants, &sink).tool(TestTool::new("files.read", "read"));
        if let Some(policy) = policy {
            builder = builder.policy_source(Rc::new(policy));
        }
        builder.build().unwrap().list_tools(&ctx(), &AbortSignal::new()).await.unwrap();
        sink.last(AuditType::ToolCatalogListed).metadata.unwrap().get("hostPolicyVersion").cloned()
    };
    assert_eq!(listed_version(Some(Policy(Ok("2026-11")))).await, Some(json!("2026-11")));
    assert_eq!(listed_version(None).await, None, "no policy source, no version");
    assert_eq!(listed_version(Some(Policy(Err("down")))).await, None, "an unavailable policy has no version");
}
