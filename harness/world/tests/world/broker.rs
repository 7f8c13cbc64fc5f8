//! The `notion-mcp` provider: rebuilt handler per listing, recorded
//! contexts, and the armed move of the declared capability.

use futures::executor::block_on;
use serde_json::{json, Value};
use sharedos_kernel::ports::{ContextToolProvider, ParsedCall, ToolHandler};
use sharedos_model::tool::{ReadWrite, ToolCall, ToolStatus};
use sharedos_model::validate::Validate;
use sharedos_port::signal::AbortSignal;
use sharedos_world::broker::{NotionBroker, BROKER_ID, NOTION_SEARCH};
use sharedos_world::constants::{
    context, owner, segments, turn_trace_id, HANDBOOK_ONBOARDING, NOW, PAYROLL_SALARIES, TRACE_ID,
};
use std::rc::Rc;

fn list(broker: &NotionBroker, trace: &str) -> Rc<dyn ToolHandler> {
    let tools = block_on(broker.list_tools(&context(NOW, trace), &AbortSignal::new())).unwrap();
    assert_eq!(tools.len(), 1);
    Rc::clone(&tools[0])
}

fn parsed(tool: &dyn ToolHandler, arguments: Value) -> ParsedCall {
    let call = ToolCall {
        id: "call-3".into(),
        tool: NOTION_SEARCH.into(),
        arguments: arguments.as_object().cloned().unwrap(),
        trace_id: TRACE_ID.into(),
        requested_at: NOW.into(),
    };
    let clean = tool.parse_arguments(&call.arguments).unwrap();
    ParsedCall::new(&call, clean)
}

#[test]
fn the_provider_serves_notion_search_from_mcp() {
    let broker = NotionBroker::new(false);
    assert_eq!(broker.id(), BROKER_ID);
    let tool = list(&broker, TRACE_ID);
    let def = tool.definition();
    def.validate().unwrap();
    assert_eq!(def.name, "notion.search");
    assert_eq!(def.namespace, "notion");
    assert_eq!(def.source, "mcp");
    assert_eq!(def.read_write, ReadWrite::Read);
    assert_eq!(def.annotations.clone().unwrap().read_only, Some(true));
    assert_eq!(def.required_capability.resource.namespace, "notion");
    assert!(def.required_capability.resource.path.is_empty());
    assert_eq!(def.required_capability.action, "search");
}

#[test]
fn every_listing_rebuilds_the_handler_and_records_its_context() {
    let broker = NotionBroker::new(false);
    let first = list(&broker, TRACE_ID);
    let second = list(&broker, &turn_trace_id(2));
    assert!(!Rc::ptr_eq(&first, &second));
    let traces: Vec<String> = broker.listed_contexts().into_iter().map(|c| c.trace_id).collect();
    assert_eq!(traces, ["trace-conformance", "trace-conformance-turn-2"]);
    assert_eq!(broker.listings(), 2);
    assert_eq!(second.definition().required_capability.action, "search", "unarmed: nothing moves");
}

#[test]
fn an_armed_broker_moves_the_declared_capability_after_the_first_listing() {
    let broker = NotionBroker::new(true);
    let held = list(&broker, TRACE_ID);
    let moved = list(&broker, TRACE_ID);
    assert_eq!(held.definition().required_capability.action, "search");
    assert_eq!(moved.definition().required_capability.action, "administer");
    let ctx = context(NOW, TRACE_ID);
    let call = parsed(held.as_ref(), json!({"path": HANDBOOK_ONBOARDING}));
    assert_eq!(
        held.resolve_requirement(&ctx, &call).unwrap().unwrap().requirement.action,
        "search",
        "the held handler keeps its action"
    );
    let call = parsed(moved.as_ref(), json!({"path": HANDBOOK_ONBOARDING}));
    assert_eq!(moved.resolve_requirement(&ctx, &call).unwrap().unwrap().requirement.action, "administer");
}

#[test]
fn search_resolves_the_page_path_for_the_context_owner_and_answers_it() {
    let broker = NotionBroker::new(false);
    let tool = list(&broker, TRACE_ID);
    let ctx = context(NOW, TRACE_ID);
    let call = parsed(tool.as_ref(), json!({"path": PAYROLL_SALARIES}));
    let requirement = tool.resolve_requirement(&ctx, &call).unwrap().unwrap().requirement;
    assert_eq!(requirement.resource.path, segments(&PAYROLL_SALARIES));
    assert_eq!(requirement.resource.owner, Some(owner()));
    let call = parsed(tool.as_ref(), json!({"path": ["Handbook"]}));
    let result = block_on(tool.invoke(&ctx, &call, &AbortSignal::new())).unwrap();
    assert_eq!(result.status(), ToolStatus::Succeeded);
    match result.outcome {
        sharedos_model::tool::ToolOutcome::Succeeded { output } => {
            assert_eq!(output["pages"][0]["path"], json!(HANDBOOK_ONBOARDING))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(broker.searches().len(), 1);
    assert!(tool
        .parse_arguments(&json!({"path": ["Handbook"], "scope": "all"}).as_object().cloned().unwrap())
        .is_err());
}
