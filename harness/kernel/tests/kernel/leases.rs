//! Turn leases and the per-turn registry (K2, K4, K6–K9, K28, K30–K32).

use crate::support;

use serde_json::json;
use sharedos_kernel::ports::ToolHandler;
use sharedos_model::audit::{AuditOutcome, AuditType};
use sharedos_model::tool::ToolStatus;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use sharedos_port::turn_kernel::TurnKernel;
use sharedos_testkit::call::call;
use sharedos_world::constants::agent;
use std::rc::Rc;
use support::*;

#[tokio::test]
async fn k2_a_kernel_is_built_from_a_grant_source_and_nothing_else_carries_authority() {
    // The builder takes the grant source as a required argument; a context
    // has no field through which grants could arrive instead.
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[TestTool::new("files.read", "read")]);
    let listed = kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(grants.loads.get(), 1, "authority came from the grant source");
}

#[tokio::test]
async fn k4_malformed_grant_material_makes_authority_unavailable_as_a_whole() {
    let mut foreign = grant("grant-foreign", "files", &["Workspace"], &["read"]);
    foreign.issuer = sharedos_model::address::Address::agent("someone-else");
    let many: Vec<_> = (0..257).map(|i| grant(&format!("g-{i}"), "files", &["Workspace"], &["read"])).collect();
    let cases = [
        (json!({"not": "an array"}), "invalid_grant_material"),
        (json!([read_grant(), {"id": "broken"}]), "invalid_grant_material"),
        (json!([read_grant(), foreign]), "grant_scope_mismatch"),
        (json!(many), "grant_limit_exceeded"),
    ];
    for (material, cause) in cases {
        let (grants, sink, tool) = (Grants::of(&[]), Sink::new(), TestTool::new("files.read", "read"));
        grants.set(Ok(material));
        let kernel = kernel_with(&grants, &sink, std::slice::from_ref(&tool));
        let result = kernel
            .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
            .await
            .unwrap();
        assert_eq!(result.error().unwrap().code, "authority_unavailable", "{cause}");
        assert_eq!(tool.calls(), 0);
        assert_eq!(sink.last(AuditType::AuthorityResolved).metadata.unwrap()["authority"], cause);
    }
}

#[tokio::test]
async fn k6_a_turn_loads_authority_once_and_answers_every_operation_from_the_lease() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, &[tool]);
    let signal = AbortSignal::new();
    let scope = kernel.open_turn_authority(&ctx(), &signal).await.unwrap();
    kernel.list_tools(&ctx().at(LATER), &signal).await.unwrap();
    for id in ["c1", "c2"] {
        let result = kernel
            .invoke_tool(&ctx().at(LATER), &call(id, "files.read", json!({"path": "Workspace"})), &signal)
            .await
            .unwrap();
        assert_eq!(result.status(), ToolStatus::Succeeded);
    }
    let _ = kernel.admit_turn(&ctx(), &agent(), &signal).await.unwrap();
    assert_eq!(grants.loads.get(), 1);
    assert_eq!(sink.count(AuditType::AuthorityResolved), 1);
    let hashes: Vec<_> = sink.of(AuditType::AuthorizationChecked).into_iter().map(|e| e.authority_hash).collect();
    assert!(hashes.windows(2).all(|w| w[0] == w[1]));
    scope.close();
}

#[tokio::test]
async fn k7_an_unavailable_resolution_is_held_for_the_whole_turn() {
    let (grants, sink, tool) = (Grants::failing(), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, &[tool]);
    let signal = AbortSignal::new();
    let scope = kernel.open_turn_authority(&ctx(), &signal).await.unwrap();
    grants.set(Ok(json!([read_grant()])));
    let result =
        kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &signal).await.unwrap();
    assert_eq!(result.error().unwrap().code, "authority_unavailable");
    assert_eq!(grants.loads.get(), 1);
    scope.close();
    let next =
        kernel.invoke_tool(&ctx(), &call("c2", "files.read", json!({"path": "Workspace"})), &signal).await.unwrap();
    assert_eq!(next.status(), ToolStatus::Succeeded, "the next turn reloads");
}

#[tokio::test]
async fn k8_an_operation_without_a_lease_loads_its_own_authority() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, &[tool]);
    let signal = AbortSignal::new();
    for id in ["c1", "c2"] {
        kernel.invoke_tool(&ctx(), &call(id, "files.read", json!({"path": "Workspace"})), &signal).await.unwrap();
    }
    assert_eq!(grants.loads.get(), 2);
    assert_eq!(sink.count(AuditType::AuthorityResolved), 2);
}

#[tokio::test]
async fn k9_the_turn_key_ignores_now_and_namespaces_but_not_trace_or_turn_id() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let kernel = kernel_with(&grants, &sink, &[tool]);
    let signal = AbortSignal::new();
    let mut opened = ctx();
    opened.turn_id = Some("turn-1".into());
    let scope = kernel.open_turn_authority(&opened, &signal).await.unwrap();
    let mut same = opened.at(LATER);
    same.enabled_tool_namespaces = vec!["files".into()];
    kernel.list_tools(&same, &signal).await.unwrap();
    assert_eq!(grants.loads.get(), 1);
    let mut other_turn = opened.clone();
    other_turn.turn_id = Some("turn-2".into());
    kernel.list_tools(&other_turn, &signal).await.unwrap();
    let mut other_trace = opened.clone();
    other_trace.trace_id = "trace-2".into();
    kernel.list_tools(&other_trace, &signal).await.unwrap();
    assert_eq!(grants.loads.get(), 3);
    scope.close();
}

#[tokio::test]
async fn k9_leases_are_ref_counted_and_close_is_idempotent() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let kernel = kernel_with(&grants, &sink, &[]);
    let signal = AbortSignal::new();
    let first = kernel.open_turn_authority(&ctx(), &signal).await.unwrap();
    let second = kernel.open_turn_authority(&ctx(), &signal).await.unwrap();
    assert_eq!(grants.loads.get(), 1);
    first.close();
    first.close();
    assert_eq!(kernel.open_lease_count(), 1, "a double close must not release the other opener");
    second.close();
    assert_eq!(kernel.open_lease_count(), 0);
}

#[tokio::test]
async fn a_failed_opening_releases_its_reservation() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    sink.fail_on(AuditType::AuthorityResolved);
    let kernel = kernel_with(&grants, &sink, &[]);
    let opened = kernel.open_turn_authority(&ctx(), &AbortSignal::new()).await;
    assert!(matches!(opened, Err(KernelError::AuditUnavailable(_))));
    assert_eq!(kernel.open_lease_count(), 0);
}

#[tokio::test]
async fn k28_registering_or_attaching_a_tool_grants_nothing() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let brokered: Rc<dyn ToolHandler> = TestTool::with(definition("notion.search", "files", "notion", "search"));
    let kernel = builder(&grants, &sink).provider(Provider::new("notion-mcp", vec![brokered])).build().unwrap();
    let signal = AbortSignal::new();
    assert!(kernel.list_tools(&ctx(), &signal).await.unwrap().is_empty());
    let result =
        kernel.invoke_tool(&ctx(), &call("c1", "notion.search", json!({"path": "Handbook"})), &signal).await.unwrap();
    assert_eq!(result.error().unwrap().code, "tool_unavailable");
}

#[tokio::test]
async fn k30_the_registry_is_resolved_once_per_turn() {
    let search = grant("grant-search", "notion", &["Handbook"], &["search"]);
    let (grants, sink) = (Grants::of(&[search]), Sink::new());
    let first: Rc<dyn ToolHandler> = TestTool::with(definition("notion.search", "files", "notion", "search"));
    let provider = Provider::new("notion-mcp", vec![first]);
    let kernel = builder(&grants, &sink).provider(provider.clone()).build().unwrap();
    let signal = AbortSignal::new();
    let scope = kernel.open_turn_authority(&ctx(), &signal).await.unwrap();
    assert_eq!(kernel.list_tools(&ctx(), &signal).await.unwrap().len(), 1);
    // The provider "moves" its declared action; the turn keeps deciding against the first.
    let moved: Rc<dyn ToolHandler> = TestTool::with(definition("notion.search", "files", "notion", "administer"));
    *provider.tools.borrow_mut() = Ok(vec![moved]);
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "notion.search", json!({"path": "Handbook/onboarding"})), &signal)
        .await
        .unwrap();
    assert_eq!(result.status(), ToolStatus::Succeeded);
    let outside = kernel
        .invoke_tool(&ctx(), &call("c2", "notion.search", json!({"path": "Payroll/salaries"})), &signal)
        .await
        .unwrap();
    assert_eq!(outside.error().unwrap().code, "no_matching_grant");
    assert_eq!(provider.lists.get(), 1);
    scope.close();
}

#[tokio::test]
async fn k31_a_failing_provider_makes_the_catalogue_unavailable_never_partial() {
    let (grants, sink, tool) = (Grants::of(&[read_grant()]), Sink::new(), TestTool::new("files.read", "read"));
    let provider = Provider::new("broken", vec![]);
    *provider.tools.borrow_mut() = Err(SECRET.into());
    let kernel = builder(&grants, &sink).tool(tool.clone()).provider(provider).build().unwrap();
    let signal = AbortSignal::new();
    let result =
        kernel.invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &signal).await.unwrap();
    assert_eq!(
        (result.status(), result.error().unwrap().code.as_str()),
        (ToolStatus::Failed, "tool_catalog_unavailable")
    );
    assert_eq!(
        result.error().unwrap().message,
        "the tool catalogue is unavailable",
        "the kernel's words, not the port's"
    );
    assert_eq!(tool.calls(), 0, "a static tool is not served from a partial registry");
    assert!(kernel.list_tools(&ctx(), &signal).await.is_err());
    assert!(!sink.text().contains(SECRET));
}

#[tokio::test]
async fn k32_duplicate_tool_names_are_rejected() {
    let (grants, sink) = (Grants::of(&[read_grant()]), Sink::new());
    let twice = builder(&grants, &sink)
        .tool(TestTool::new("files.read", "read"))
        .tool(TestTool::new("files.read", "read"))
        .build();
    assert!(matches!(twice, Err(KernelError::InvalidInput(_))));
    let shadow: Rc<dyn ToolHandler> = TestTool::new("files.read", "read");
    let kernel = builder(&grants, &sink)
        .tool(TestTool::new("files.read", "read"))
        .provider(Provider::new("shadowing", vec![shadow]))
        .build()
        .unwrap();
    let result = kernel
        .invoke_tool(&ctx(), &call("c1", "files.read", json!({"path": "Workspace"})), &AbortSignal::new())
        .await
        .unwrap();
    assert_eq!(result.error().unwrap().code, "tool_catalog_unavailable");
}

#[tokio::test]
async fn providers_are_merged_in_id_order_after_static_tools() {
    let g = |n: &str| grant(n, "files", &["Workspace"], &["read", "stat", "list"]);
    let (grants, sink) = (Grants::of(&[g("g1")]), Sink::new());
    let b: Rc<dyn ToolHandler> = TestTool::new("files.stat", "stat");
    let a: Rc<dyn ToolHandler> = TestTool::new("files.list", "list");
    let kernel = builder(&grants, &sink)
        .tool(TestTool::new("files.read", "read"))
        .provider(Provider::new("zeta", vec![b]))
        .provider(Provider::new("alpha", vec![a]))
        .build()
        .unwrap();
    let names: Vec<String> =
        kernel.list_tools(&ctx(), &AbortSignal::new()).await.unwrap().into_iter().map(|d| d.name.clone()).collect();
    assert_eq!(names, vec!["files.read", "files.list", "files.stat"]);
    assert_eq!(sink.last(AuditType::ToolCatalogListed).outcome, AuditOutcome::Succeeded);
}
