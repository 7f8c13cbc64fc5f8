//! The twelve shipped file tools over the world's file store. Each declares
//! the ceiling `files / [] / <action>` and resolves, per call,
//! `files / args.path / <action>` owned by the context's owner.

use super::arguments::{self as args, object_schema, path_schema, shared, MAX_COUNT};
use super::constants::FILES;
use super::file_store::{FileAction, FileStore};
use super::results;
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_kernel::ports::{HandlerError, ParsedCall, Resolution, ToolHandler};
use sharedos_model::access::AccessContext;
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_model::tool::{ReadWrite, SharedObject, ToolAnnotations, ToolDefinition, ToolResult};
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

/// Source of the shipped tools.
pub const SHIPPED_SOURCE: &str = "sharedos";

/// The tool name of a shipped file action.
#[must_use]
pub fn tool_name(action: FileAction) -> &'static str {
    match action {
        FileAction::List => "files.list",
        FileAction::Stat => "files.stat",
        FileAction::Read => "files.read",
        FileAction::Search => "files.search",
        FileAction::Grep => "files.grep",
        FileAction::Create => "files.create",
        FileAction::Replace => "files.replace",
        FileAction::Append => "files.append",
        FileAction::Delete => "files.delete",
        FileAction::SnapshotCreate => "files.snapshot.create",
        FileAction::SnapshotList => "files.snapshot.list",
        FileAction::SnapshotRestore => "files.snapshot.restore",
    }
}

fn description(action: FileAction) -> &'static str {
    match action {
        FileAction::List => "List the entries directly inside a folder of the owner's files.",
        FileAction::Stat => "Report whether a path is a file or a folder, with a file's size and version.",
        FileAction::Read => "Read the text of one of the owner's files.",
        FileAction::Search => "Find files under a folder whose name or text contains a query.",
        FileAction::Grep => "Find lines matching a literal pattern in files under a path.",
        FileAction::Create => "Create a new file with the given text; fails if something is already there.",
        FileAction::Replace => "Replace the whole text of an existing file.",
        FileAction::Append => "Add text to the end of an existing file.",
        FileAction::Delete => "Delete a file, or a folder and everything in it when recursive.",
        FileAction::SnapshotCreate => "Capture the files under a path so they can be listed and restored later.",
        FileAction::SnapshotList => "List the snapshots that hold files under a path.",
        FileAction::SnapshotRestore => "Put the files under a path back as a snapshot captured them.",
    }
}

fn read_write(action: FileAction) -> ReadWrite {
    match action {
        FileAction::List
        | FileAction::Stat
        | FileAction::Read
        | FileAction::Search
        | FileAction::Grep
        | FileAction::SnapshotList => ReadWrite::Read,
        _ => ReadWrite::Write,
    }
}

fn annotations(action: FileAction) -> Option<ToolAnnotations> {
    match (read_write(action), action) {
        (ReadWrite::Read, _) => Some(ToolAnnotations { read_only: Some(true), ..ToolAnnotations::default() }),
        (_, FileAction::Replace | FileAction::Delete | FileAction::SnapshotRestore) => {
            Some(ToolAnnotations { destructive: Some(true), ..ToolAnnotations::default() })
        }
        _ => None,
    }
}

/// Every file tool's definition, built once (see [`shared`]).
static DEFINITIONS: LazyLock<[(FileAction, Arc<ToolDefinition>); 12]> =
    LazyLock::new(|| FileAction::ALL.map(|action| (action, Arc::new(build_definition(action)))));

fn input_schema(action: FileAction) -> Map<String, Value> {
    let path = path_schema(if action == FileAction::Create { 1 } else { 0 });
    let text = json!({"type": "string"});
    let version = json!({"type": "integer", "minimum": 1});
    let count = json!({"type": "integer", "minimum": 0, "maximum": MAX_COUNT});
    let object = json!({"type": "object"});
    match action {
        FileAction::List | FileAction::Stat | FileAction::Read => {
            object_schema(json!({"path": path}), &["path"], false)
        }
        FileAction::Search => {
            object_schema(json!({"path": path, "query": text, "limit": count}), &["path", "query"], false)
        }
        FileAction::Grep => object_schema(
            json!({
                "path": path, "pattern": {"type": "string", "minLength": 1},
                "mode": {"type": "string", "enum": ["content", "files", "count"], "default": "content"},
                "caseSensitive": {"type": "boolean", "default": true},
                "contextBefore": count, "contextAfter": count
            }),
            &["path", "pattern"],
            false,
        ),
        FileAction::Create => {
            object_schema(json!({"path": path, "content": text, "metadata": object}), &["path", "content"], false)
        }
        FileAction::Replace => object_schema(
            json!({"path": path, "content": text, "expectedVersion": version}),
            &["path", "content"],
            false,
        ),
        FileAction::Append => object_schema(
            json!({"path": path, "content": text, "expectedVersion": version, "metadata": object}),
            &["path", "content"],
            false,
        ),
        FileAction::Delete => object_schema(
            json!({"path": path, "expectedVersion": version, "recursive": {"type": "boolean", "default": false}}),
            &["path"],
            false,
        ),
        FileAction::SnapshotCreate => object_schema(json!({"path": path, "label": text}), &["path"], false),
        FileAction::SnapshotList => object_schema(json!({"path": path, "limit": count}), &["path"], false),
        FileAction::SnapshotRestore => object_schema(
            json!({"path": path, "snapshotId": {"type": "string", "minLength": 1}, "expectedVersion": version}),
            &["path", "snapshotId"],
            false,
        ),
    }
}

/// The registry definition of a shipped file tool.
#[must_use]
pub fn definition(action: FileAction) -> ToolDefinition {
    (*shared(&*DEFINITIONS, action, build_definition)).clone()
}

fn build_definition(action: FileAction) -> ToolDefinition {
    ToolDefinition {
        name: tool_name(action).to_string(),
        description: description(action).to_string(),
        namespace: FILES.to_string(),
        source: SHIPPED_SOURCE.to_string(),
        read_write: read_write(action),
        input_schema: SharedObject::new(input_schema(action)),
        output_schema: None,
        required_capability: Requirement {
            resource: ResourceRef { namespace: FILES.to_string(), path: Vec::new(), owner: None },
            action: action.as_str().to_string(),
        },
        annotations: annotations(action),
        metadata: None,
    }
}

fn insert_some<T: Into<Value>>(out: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(v) = value {
        out.insert(key.to_string(), v.into());
    }
}

fn allowed_keys(action: FileAction) -> &'static [&'static str] {
    match action {
        FileAction::List | FileAction::Stat | FileAction::Read => &["path"],
        FileAction::Search => &["path", "query", "limit"],
        FileAction::Grep => &["path", "pattern", "mode", "caseSensitive", "contextBefore", "contextAfter"],
        FileAction::Create => &["path", "content", "metadata"],
        FileAction::Replace => &["path", "content", "expectedVersion"],
        FileAction::Append => &["path", "content", "expectedVersion", "metadata"],
        FileAction::Delete => &["path", "expectedVersion", "recursive"],
        FileAction::SnapshotCreate => &["path", "label"],
        FileAction::SnapshotList => &["path", "limit"],
        FileAction::SnapshotRestore => &["path", "snapshotId", "expectedVersion"],
    }
}

/// The strict parser of a shipped file tool: unknown keys, missing required
/// keys (mutations need `content`) and ill-typed values are refused; the
/// output carries defaults filled in.
///
/// # Errors
/// Describing the first argument that does not fit.
pub fn parse_file_arguments(action: FileAction, input: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    args::only_keys(input, allowed_keys(action))?;
    let mut out = Map::new();
    let min = usize::from(action == FileAction::Create);
    out.insert("path".into(), args::path_value(&args::path(input, "path", min)?));
    match action {
        FileAction::List | FileAction::Stat | FileAction::Read => {}
        FileAction::Search => {
            out.insert("query".into(), args::string(input, "query")?.into());
            insert_some(&mut out, "limit", args::optional_count(input, "limit", MAX_COUNT)?);
        }
        FileAction::Grep => {
            out.insert("pattern".into(), args::non_empty_string(input, "pattern")?.into());
            out.insert("mode".into(), args::choice(input, "mode", &["content", "files", "count"], "content")?.into());
            out.insert("caseSensitive".into(), args::optional_bool(input, "caseSensitive")?.unwrap_or(true).into());
            for key in ["contextBefore", "contextAfter"] {
                out.insert(key.into(), args::optional_count(input, key, MAX_COUNT)?.unwrap_or(0).into());
            }
        }
        FileAction::Create | FileAction::Replace | FileAction::Append => {
            out.insert("content".into(), args::string(input, "content")?.into());
            insert_some(&mut out, "expectedVersion", args::optional_version(input, "expectedVersion")?);
            insert_some(&mut out, "metadata", args::optional_object(input, "metadata")?);
        }
        FileAction::Delete => {
            insert_some(&mut out, "expectedVersion", args::optional_version(input, "expectedVersion")?);
            out.insert("recursive".into(), args::optional_bool(input, "recursive")?.unwrap_or(false).into());
        }
        FileAction::SnapshotCreate => insert_some(&mut out, "label", args::optional_string(input, "label")?),
        FileAction::SnapshotList => insert_some(&mut out, "limit", args::optional_count(input, "limit", MAX_COUNT)?),
        FileAction::SnapshotRestore => {
            out.insert("snapshotId".into(), args::non_empty_string(input, "snapshotId")?.into());
            insert_some(&mut out, "expectedVersion", args::optional_version(input, "expectedVersion")?);
        }
    }
    Ok(out)
}

/// The path of a parsed call (the parser guarantees it).
///
/// # Errors
/// When the parsed arguments carry no path of segments.
pub fn parsed_path(call: &ParsedCall) -> Result<Vec<String>, String> {
    args::path(&call.arguments, "path", 0)
}

/// `namespace / path / action` owned by `owner`.
#[must_use]
pub fn owned_requirement(
    namespace: &str,
    path: Vec<String>,
    action: &str,
    owner: &sharedos_model::address::Address,
) -> Requirement {
    Requirement {
        resource: ResourceRef { namespace: namespace.to_string(), path, owner: Some(owner.clone()) },
        action: action.to_string(),
    }
}

/// Runs `action` on the store and answers as a tool result at the context's instant.
pub(crate) fn run_on_store(
    store: &FileStore,
    action: &str,
    context: &AccessContext,
    call: &ParsedCall,
) -> Result<ToolResult, HandlerError> {
    let path = parsed_path(call).map_err(HandlerError::Failed)?;
    Ok(match store.execute(action, &path, &call.arguments) {
        Ok(output) => results::succeeded(call, output, &context.now),
        Err(failure) => results::failed(call, failure.code.as_str(), &failure.message, &context.now),
    })
}

/// One shipped file tool.
pub struct FileTool {
    action: FileAction,
    definition: Arc<ToolDefinition>,
    store: Rc<FileStore>,
}

impl FileTool {
    /// The tool for `action` over `store`.
    #[must_use]
    pub fn new(action: FileAction, store: Rc<FileStore>) -> FileTool {
        FileTool { action, definition: shared(&*DEFINITIONS, action, build_definition), store }
    }

    /// The store action it runs.
    #[must_use]
    pub fn action(&self) -> FileAction {
        self.action
    }
}

impl ToolHandler for FileTool {
    fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        parse_file_arguments(self.action, arguments)
    }

    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        Some(parsed_path(call).map(|path| owned_requirement(FILES, path, self.action.as_str(), &context.owner).into()))
    }

    fn invoke<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ParsedCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>> {
        Box::pin(async move {
            if signal.is_aborted() {
                return Err(HandlerError::Aborted);
            }
            run_on_store(&self.store, self.action.as_str(), context, call)
        })
    }
}

/// The twelve shipped tools over `store`, in registration order.
#[must_use]
pub fn file_tools(store: &Rc<FileStore>) -> Vec<Rc<dyn ToolHandler>> {
    FileAction::ALL
        .into_iter()
        .map(|action| Rc::new(FileTool::new(action, Rc::clone(store))) as Rc<dyn ToolHandler>)
        .collect()
}
