//! The twelve shipped file tools: definitions, strict parsers, per-call
//! requirements and effects.

use futures::executor::block_on;
use serde_json::{json, Map, Value};
use sharedos_kernel::ports::{HandlerError, ParsedCall, ToolHandler};
use sharedos_model::address::Address;
use sharedos_model::tool::{ReadWrite, ToolCall, ToolOutcome, ToolStatus};
use sharedos_model::validate::Validate;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_world::constants::{context, owner, segments, DRAFT_FILE, NOW, POLICY_FILE, TRACE_ID};
use sharedos_world::file_store::{FileAction, FileStore};
use sharedos_world::file_tools::{definition, file_tools, tool_name, FileTool};
use std::rc::Rc;

fn map(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn parsed(tool: &dyn ToolHandler, arguments: Value) -> ParsedCall {
    let call = ToolCall {
        id: "call-1".into(),
        tool: tool.definition().name.clone(),
        arguments: map(arguments),
        trace_id: TRACE_ID.into(),
        requested_at: NOW.into(),
    };
    let clean = tool.parse_arguments(&call.arguments).unwrap();
    ParsedCall::new(&call, clean)
}

fn tool(action: FileAction) -> (Rc<FileStore>, FileTool) {
    let store = Rc::new(FileStore::seeded());
    (Rc::clone(&store), FileTool::new(action, store))
}

#[test]
fn the_twelve_tools_register_in_catalogue_order() {
    let store = Rc::new(FileStore::seeded());
    let names: Vec<String> = file_tools(&store).iter().map(|t| t.definition().name.clone()).collect();
    assert_eq!(
        names,
        [
            "files.list",
            "files.stat",
            "files.read",
            "files.search",
            "files.grep",
            "files.create",
            "files.replace",
            "files.append",
            "files.delete",
            "files.snapshot.create",
            "files.snapshot.list",
            "files.snapshot.restore"
        ]
    );
}

#[test]
fn definitions_declare_the_namespace_root_ceiling_for_their_action() {
    for action in FileAction::ALL {
        let def = definition(action);
        def.validate().unwrap();
        assert_eq!(def.namespace, "files");
        assert_eq!(def.required_capability.resource.namespace, "files");
        assert!(def.required_capability.resource.path.is_empty(), "{}", def.name);
        assert_eq!(def.required_capability.resource.owner, None);
        assert_eq!(def.required_capability.action, action.as_str());
        assert_eq!(def.input_schema["additionalProperties"], json!(false), "{} is strict", def.name);
    }
}

#[test]
fn read_write_and_annotations_follow_the_catalogue() {
    let reads = [
        FileAction::List,
        FileAction::Stat,
        FileAction::Read,
        FileAction::Search,
        FileAction::Grep,
        FileAction::SnapshotList,
    ];
    let destructive = [FileAction::Replace, FileAction::Delete, FileAction::SnapshotRestore];
    for action in FileAction::ALL {
        let def = definition(action);
        let annotations = def.annotations.clone().unwrap_or_default();
        if reads.contains(&action) {
            assert_eq!(def.read_write, ReadWrite::Read, "{}", def.name);
            assert_eq!(annotations.read_only, Some(true), "{}", def.name);
        } else {
            assert_eq!(def.read_write, ReadWrite::Write, "{}", def.name);
            assert_eq!(annotations.read_only, None);
            assert_eq!(annotations.destructive, destructive.contains(&action).then_some(true), "{}", def.name);
        }
        assert_eq!(annotations.idempotent, None, "no conformance tool declares idempotence");
    }
}

#[test]
fn mutations_refuse_a_call_without_content() {
    for action in [FileAction::Create, FileAction::Replace, FileAction::Append] {
        let (_, t) = tool(action);
        let err = t.parse_arguments(&map(json!({"path": DRAFT_FILE}))).unwrap_err();
        assert!(err.contains("content"), "{}: {err}", tool_name(action));
        assert!(t.parse_arguments(&map(json!({"path": DRAFT_FILE, "content": "conformance"}))).is_ok());
    }
}

#[test]
fn parsers_refuse_unknown_keys_bad_paths_and_bad_types() {
    let (_, read) = tool(FileAction::Read);
    assert!(read.parse_arguments(&map(json!({"path": POLICY_FILE, "grant": {}}))).is_err());
    assert!(read.parse_arguments(&map(json!({"path": "Workspace/policy.md"}))).is_err(), "paths are segment arrays");
    assert!(read.parse_arguments(&map(json!({"path": ["Workspace", ".."]}))).is_err());
    assert!(read.parse_arguments(&map(json!({}))).is_err());
    let (_, create) = tool(FileAction::Create);
    assert!(
        create.parse_arguments(&map(json!({"path": [], "content": "x"}))).is_err(),
        "create needs a path of one segment at least"
    );
    let (_, delete) = tool(FileAction::Delete);
    assert!(delete.parse_arguments(&map(json!({"path": DRAFT_FILE, "recursive": "yes"}))).is_err());
    let (_, restore) = tool(FileAction::SnapshotRestore);
    assert!(restore.parse_arguments(&map(json!({"path": DRAFT_FILE}))).is_err(), "restore needs a snapshot id");
    let (_, search) = tool(FileAction::Search);
    assert!(search.parse_arguments(&map(json!({"path": [], "query": "x", "limit": -1}))).is_err());
}

#[test]
fn parsers_fill_defaults_into_the_frozen_call() {
    let (_, delete) = tool(FileAction::Delete);
    let out = delete.parse_arguments(&map(json!({"path": DRAFT_FILE}))).unwrap();
    assert_eq!(out["recursive"], json!(false));
    let (_, grep) = tool(FileAction::Grep);
    let out = grep.parse_arguments(&map(json!({"path": [], "pattern": "x"}))).unwrap();
    assert_eq!(
        Value::Object(out),
        json!({"path": [], "pattern": "x", "mode": "content", "caseSensitive": true, "contextBefore": 0, "contextAfter": 0})
    );
}

#[test]
fn requirement_is_args_path_and_action_with_the_context_owner() {
    let ctx = context(NOW, TRACE_ID);
    for action in FileAction::ALL {
        let (_, t) = tool(action);
        let arguments =
            json!({"path": DRAFT_FILE, "content": "c", "query": "q", "pattern": "p", "snapshotId": "snapshot-1"});
        let required: &[&str] = match action {
            FileAction::Search => &["query"],
            FileAction::Grep => &["pattern"],
            FileAction::Create | FileAction::Replace | FileAction::Append => &["content"],
            FileAction::SnapshotRestore => &["snapshotId"],
            _ => &[],
        };
        let mut input = map(json!({"path": DRAFT_FILE}));
        for key in required {
            input.insert((*key).to_string(), arguments[*key].clone());
        }
        let call = parsed(&t, Value::Object(input));
        let requirement = t.resolve_requirement(&ctx, &call).unwrap().unwrap().requirement;
        assert_eq!(requirement.resource.namespace, "files");
        assert_eq!(requirement.resource.path, segments(&DRAFT_FILE));
        assert_eq!(requirement.resource.owner, Some(owner()));
        assert_eq!(requirement.action, action.as_str());
    }
}

#[test]
fn the_requirement_owner_is_always_the_context_owner() {
    let mut ctx = context(NOW, TRACE_ID);
    ctx.owner = Address::human("user-bob");
    let (_, t) = tool(FileAction::Read);
    let call = parsed(&t, json!({"path": POLICY_FILE}));
    let requirement = t.resolve_requirement(&ctx, &call).unwrap().unwrap().requirement;
    assert_eq!(requirement.resource.owner, Some(Address::human("user-bob")));
}

#[test]
fn invoke_answers_the_store_at_the_context_instant() {
    let ctx = context("2026-08-18T09:00:05.000Z", TRACE_ID);
    let (store, t) = tool(FileAction::Replace);
    let call = parsed(&t, json!({"path": DRAFT_FILE, "content": "conformance"}));
    let result = block_on(t.invoke(&ctx, &call, &AbortSignal::new())).unwrap();
    assert_eq!(result.status(), ToolStatus::Succeeded);
    assert_eq!(result.call_id, "call-1");
    assert_eq!(result.tool, "files.replace");
    assert_eq!(result.completed_at, "2026-08-18T09:00:05.000Z");
    assert_eq!(store.content(&segments(&DRAFT_FILE)).as_deref(), Some("conformance"));
}

#[test]
fn store_refusals_come_back_as_failed_results_with_the_store_code() {
    let ctx = context(NOW, TRACE_ID);
    let (_, t) = tool(FileAction::Create);
    let call = parsed(&t, json!({"path": POLICY_FILE, "content": "x"}));
    let result = block_on(t.invoke(&ctx, &call, &AbortSignal::new())).unwrap();
    match result.outcome {
        ToolOutcome::Failed { error } => assert_eq!(error.code, "resource_exists"),
        other => panic!("expected failed, got {other:?}"),
    }
}

#[test]
fn an_aborted_signal_stops_the_tool_before_the_store() {
    let ctx = context(NOW, TRACE_ID);
    let (store, t) = tool(FileAction::Read);
    let call = parsed(&t, json!({"path": POLICY_FILE}));
    let signal = AbortSignal::new();
    signal.abort(AbortReason::Timeout);
    let outcome = block_on(t.invoke(&ctx, &call, &signal));
    assert_eq!(outcome.unwrap_err(), HandlerError::Aborted);
    assert!(store.operations().is_empty());
}
