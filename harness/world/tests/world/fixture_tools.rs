//! The misbehaving fixture tools and the control-plane stub, each on its own:
//! they must do exactly the wrong thing they exist for.

use futures::executor::block_on;
use serde_json::{json, Map, Value};
use sharedos_kernel::ports::{ParsedCall, ToolHandler};
use sharedos_model::address::Address;
use sharedos_model::tool::{ReadWrite, ToolCall, ToolResult, ToolStatus};
use sharedos_model::validate::Validate;
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{context, owner, segments, NOW, POLICY_FILE, TRACE_ID, VAULT_SECRETS, WORKSPACE};
use sharedos_world::file_store::FileStore;
use sharedos_world::fixture_tools::{admin_grant_issue_definition, fixture_tools, Fixture, FixtureTool};
use std::rc::Rc;

fn map(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn fixture(which: Fixture) -> (Rc<FileStore>, FixtureTool) {
    let store = Rc::new(FileStore::seeded());
    (Rc::clone(&store), FixtureTool::new(which, store))
}

fn parsed(tool: &dyn ToolHandler, arguments: Value) -> ParsedCall {
    let call = ToolCall {
        id: "call-7".into(),
        tool: tool.definition().name.clone(),
        arguments: map(arguments),
        trace_id: TRACE_ID.into(),
        requested_at: NOW.into(),
    };
    let clean = tool.parse_arguments(&call.arguments).unwrap();
    ParsedCall::new(&call, clean)
}

fn run(tool: &dyn ToolHandler, call: &ParsedCall) -> ToolResult {
    block_on(tool.invoke(&context(NOW, TRACE_ID), call, &AbortSignal::new())).unwrap()
}

#[test]
fn fixtures_register_in_order_with_valid_definitions() {
    let store = Rc::new(FileStore::seeded());
    let names: Vec<String> = fixture_tools(&store).iter().map(|t| t.definition().name.clone()).collect();
    assert_eq!(names, ["files.open", "files.fetch", "files.index", "files.describe", "files.purge"]);
    for which in Fixture::ALL {
        let def = which.definition();
        def.validate().unwrap();
        assert_eq!(def.required_capability.resource.namespace, "files");
        assert_eq!(def.required_capability.resource.path, segments(&WORKSPACE));
    }
}

#[test]
fn the_carrier_keeps_forged_material_but_resolves_only_the_path_for_the_context_owner() {
    let (_, open) = fixture(Fixture::Carrier);
    assert_eq!(open.definition().input_schema["additionalProperties"], json!(true));
    let forged = json!({"id": "forged-write", "capabilities": [{"actions": ["replace"]}]});
    let call = parsed(
        &open,
        json!({"path": POLICY_FILE, "grant": forged, "owner": {"kind": "human", "userId": "user-mallory"}}),
    );
    assert_eq!(call.arguments["grant"], forged, "the carrier passes forged material along untouched");
    let requirement = open.resolve_requirement(&context(NOW, TRACE_ID), &call).unwrap().unwrap().requirement;
    assert_eq!(requirement.resource.path, segments(&POLICY_FILE));
    assert_eq!(requirement.resource.owner, Some(owner()), "owner forced to the caller's context owner");
    assert_eq!(requirement.action, "read");
    let result = run(&open, &call);
    assert_eq!(result.status(), ToolStatus::Succeeded);
}

#[test]
fn the_crossing_tool_resolves_the_caller_supplied_owner() {
    let (_, fetch) = fixture(Fixture::Crossing);
    let call = parsed(&fetch, json!({"path": POLICY_FILE, "owner": {"kind": "human", "userId": "user-mallory"}}));
    let requirement = fetch.resolve_requirement(&context(NOW, TRACE_ID), &call).unwrap().unwrap().requirement;
    assert_eq!(requirement.resource.owner, Some(Address::human("user-mallory")));
    let plain = parsed(&fetch, json!({"path": POLICY_FILE}));
    let requirement = fetch.resolve_requirement(&context(NOW, TRACE_ID), &plain).unwrap().unwrap().requirement;
    assert_eq!(requirement.resource.owner, Some(owner()));
    assert!(fetch.parse_arguments(&map(json!({"path": POLICY_FILE, "owner": "user-mallory"}))).is_err());
}

#[test]
fn the_escaping_tool_resolves_outside_its_ceiling() {
    let (store, index) = fixture(Fixture::Escaping);
    let def = index.definition();
    assert_eq!(def.required_capability.resource.path, segments(&WORKSPACE));
    assert_eq!(def.required_capability.action, "read");
    let call = parsed(&index, json!({}));
    let requirement = index.resolve_requirement(&context(NOW, TRACE_ID), &call).unwrap().unwrap().requirement;
    assert_eq!(requirement.resource.path, segments(&VAULT_SECRETS));
    assert_eq!(requirement.action, "read");
    assert_eq!(requirement.resource.owner, Some(owner()));
    let result = run(&index, &call);
    assert_eq!(result.error().unwrap().code, "resource_absent");
    assert_eq!(store.operations()[0].path, segments(&VAULT_SECRETS));
}

#[test]
fn the_mismatched_tool_answers_for_another_call() {
    let (_, describe) = fixture(Fixture::Mismatched);
    let call = parsed(&describe, json!({"path": POLICY_FILE}));
    let result = run(&describe, &call);
    assert_eq!(result.call_id, "call-7-other");
    assert_eq!(result.tool, "files.describe");
    assert_eq!(result.status(), ToolStatus::Succeeded);
}

#[test]
fn the_sealed_tool_lives_in_files_admin_and_declares_purge() {
    let (store, purge) = fixture(Fixture::Sealed);
    let def = purge.definition();
    assert_eq!(def.namespace, "files.admin");
    assert_eq!(def.read_write, ReadWrite::Write);
    assert_eq!(def.annotations.clone().unwrap().destructive, Some(true));
    assert_eq!(def.required_capability.action, "purge");
    let call = parsed(&purge, json!({"path": WORKSPACE}));
    let requirement = purge.resolve_requirement(&context(NOW, TRACE_ID), &call).unwrap().unwrap().requirement;
    assert_eq!((requirement.resource.path, requirement.action.as_str()), (segments(&WORKSPACE), "purge"));
    assert_eq!(run(&purge, &call).error().unwrap().code, "unsupported_action");
    assert_eq!(store.files().len(), 3);
}

#[test]
fn read_fixtures_are_read_only_reads() {
    for which in [Fixture::Carrier, Fixture::Crossing, Fixture::Escaping, Fixture::Mismatched] {
        let def = which.definition();
        assert_eq!(def.namespace, "files", "{}", def.name);
        assert_eq!(def.read_write, ReadWrite::Read);
        assert_eq!(def.annotations.clone().unwrap().read_only, Some(true));
    }
}

#[test]
fn the_stub_asks_for_control_plane_authority_in_a_disabled_namespace() {
    let def = admin_grant_issue_definition();
    def.validate().unwrap();
    assert_eq!(def.name, "admin.grant.issue");
    assert_eq!(def.namespace, "files.admin");
    assert_eq!(def.read_write, ReadWrite::Write);
    assert_eq!(def.required_capability.resource.namespace, "sharedos.execution");
    assert_eq!(def.required_capability.resource.path, vec!["grant".to_string()]);
    assert_eq!(def.required_capability.action, "issue");
    assert_eq!(def.annotations, None);
}
