//! The world's in-memory file store: files over segment paths, snapshots,
//! and a log of every operation for assertions. It is undefended — it does
//! whatever it is asked on whatever path — so authorization is the kernel's.

use super::arguments::path_value;
use super::constants::{
    segments, DRAFT_CONTENT, DRAFT_FILE, LEDGER_ENTRY, LEDGER_ENTRY_CONTENT, POLICY_CONTENT, POLICY_FILE,
    SEEDED_SNAPSHOT, WORKSPACE,
};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The twelve actions the store answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileAction {
    /// Immediate children of a folder.
    List,
    /// Kind, size and version of a file or folder.
    Stat,
    /// A file's content.
    Read,
    /// Files whose name or content contains a query.
    Search,
    /// Lines matching a literal pattern.
    Grep,
    /// A new file.
    Create,
    /// A file's whole content.
    Replace,
    /// Text added at a file's end.
    Append,
    /// A file, or a folder when recursive.
    Delete,
    /// A capture of the files under a path.
    SnapshotCreate,
    /// Snapshots holding files under a path.
    SnapshotList,
    /// Files under a path put back as a snapshot captured them.
    SnapshotRestore,
}

impl FileAction {
    /// Every action, in catalogue order.
    pub const ALL: [FileAction; 12] = [
        FileAction::List,
        FileAction::Stat,
        FileAction::Read,
        FileAction::Search,
        FileAction::Grep,
        FileAction::Create,
        FileAction::Replace,
        FileAction::Append,
        FileAction::Delete,
        FileAction::SnapshotCreate,
        FileAction::SnapshotList,
        FileAction::SnapshotRestore,
    ];

    /// The capability action.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            FileAction::List => "list",
            FileAction::Stat => "stat",
            FileAction::Read => "read",
            FileAction::Search => "search",
            FileAction::Grep => "grep",
            FileAction::Create => "create",
            FileAction::Replace => "replace",
            FileAction::Append => "append",
            FileAction::Delete => "delete",
            FileAction::SnapshotCreate => "snapshot:create",
            FileAction::SnapshotList => "snapshot:list",
            FileAction::SnapshotRestore => "snapshot:restore",
        }
    }

    /// Parses a capability action.
    #[must_use]
    pub fn parse(text: &str) -> Option<FileAction> {
        FileAction::ALL.into_iter().find(|a| a.as_str() == text)
    }

    /// How the operation touches the store.
    #[must_use]
    pub fn effect(self) -> FileEffect {
        match self {
            FileAction::List
            | FileAction::Stat
            | FileAction::Read
            | FileAction::Search
            | FileAction::Grep
            | FileAction::SnapshotList => FileEffect::Read,
            FileAction::SnapshotRestore => FileEffect::Recovery,
            _ => FileEffect::Write,
        }
    }
}

/// How an operation touches the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileEffect {
    /// Observes only.
    Read,
    /// Changes files or snapshots.
    Write,
    /// Puts files back from a snapshot.
    Recovery,
}

/// Why the store refused an operation (the code a file tool fails with).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileFailureCode {
    /// `create` on an existing file.
    ResourceExists,
    /// Nothing at the path.
    ResourceAbsent,
    /// No snapshot with that id.
    SnapshotAbsent,
    /// An action the store does not know.
    UnsupportedAction,
    /// `expectedVersion` differs from the file's version.
    VersionConflict,
}

impl FileFailureCode {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            FileFailureCode::ResourceExists => "resource_exists",
            FileFailureCode::ResourceAbsent => "resource_absent",
            FileFailureCode::SnapshotAbsent => "snapshot_absent",
            FileFailureCode::UnsupportedAction => "unsupported_action",
            FileFailureCode::VersionConflict => "version_conflict",
        }
    }
}

/// A refused operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("run the file operation: {message}")]
pub struct FileFailure {
    /// The code.
    pub code: FileFailureCode,
    /// Host-readable detail.
    pub message: String,
}

impl FileFailure {
    fn new(code: FileFailureCode, message: impl Into<String>) -> FileFailure {
        FileFailure { code, message: message.into() }
    }

    fn absent(path: &[String]) -> FileFailure {
        FileFailure::new(FileFailureCode::ResourceAbsent, format!("nothing at {}", path.join("/")))
    }
}

/// One file's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// Text content.
    pub content: String,
    /// Starts at 1, bumped by every write.
    pub version: u64,
}

/// A capture of files under a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Snapshot id.
    pub id: String,
    /// The path it was taken of.
    pub root: Vec<String>,
    /// Optional caller label.
    pub label: Option<String>,
    /// The captured files.
    pub files: BTreeMap<Vec<String>, FileEntry>,
}

/// One operation the store ran or refused, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOperation {
    /// The action as asked (may be unknown).
    pub action: String,
    /// The path.
    pub path: Vec<String>,
    /// How it touches the store (`None` for unknown actions).
    pub effect: Option<FileEffect>,
    /// The refusal, if any.
    pub failure: Option<FileFailureCode>,
}

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<Vec<String>, FileEntry>,
    snapshots: BTreeMap<String, Snapshot>,
    snapshot_order: Vec<String>,
    log: Vec<FileOperation>,
}

/// The in-memory store. Share it as `Rc<FileStore>` between tools and tests.
#[derive(Debug, Default)]
pub struct FileStore {
    state: RefCell<State>,
}

fn is_under(path: &[String], root: &[String]) -> bool {
    path.len() >= root.len() && path[..root.len()] == *root
}

impl FileStore {
    /// An empty store.
    #[must_use]
    pub fn empty() -> FileStore {
        FileStore::default()
    }

    /// The seeded conformance store: policy, draft and ledger entry, and
    /// `snapshot-1` of the policy file and the draft.
    #[must_use]
    pub fn seeded() -> FileStore {
        let store = FileStore::empty();
        store.put(&segments(&POLICY_FILE), POLICY_CONTENT);
        store.put(&segments(&DRAFT_FILE), DRAFT_CONTENT);
        store.put(&segments(&LEDGER_ENTRY), LEDGER_ENTRY_CONTENT);
        {
            let mut state = store.state.borrow_mut();
            let files = [segments(&POLICY_FILE), segments(&DRAFT_FILE)]
                .into_iter()
                .filter_map(|p| state.files.get(&p).cloned().map(|e| (p, e)))
                .collect();
            let snapshot = Snapshot { id: SEEDED_SNAPSHOT.to_string(), root: segments(&WORKSPACE), label: None, files };
            state.snapshot_order.push(snapshot.id.clone());
            state.snapshots.insert(snapshot.id.clone(), snapshot);
        }
        store
    }

    /// Trusted setup: writes a file at version 1 without logging.
    pub fn put(&self, path: &[String], content: &str) {
        let entry = FileEntry { content: content.to_string(), version: 1 };
        self.state.borrow_mut().files.insert(path.to_vec(), entry);
    }

    /// The file at `path`, if any.
    #[must_use]
    pub fn file(&self, path: &[String]) -> Option<FileEntry> {
        self.state.borrow().files.get(path).cloned()
    }

    /// The content at `path`, if any.
    #[must_use]
    pub fn content(&self, path: &[String]) -> Option<String> {
        self.file(path).map(|f| f.content)
    }

    /// Every file, by path.
    #[must_use]
    pub fn files(&self) -> BTreeMap<Vec<String>, FileEntry> {
        self.state.borrow().files.clone()
    }

    /// The snapshot `id`, if any.
    #[must_use]
    pub fn snapshot(&self, id: &str) -> Option<Snapshot> {
        self.state.borrow().snapshots.get(id).cloned()
    }

    /// Every operation asked of the store, in order.
    #[must_use]
    pub fn operations(&self) -> Vec<FileOperation> {
        self.state.borrow().log.clone()
    }

    /// Operations with `effect` that ran (refusals excluded).
    #[must_use]
    pub fn completed(&self, effect: FileEffect) -> Vec<FileOperation> {
        self.operations().into_iter().filter(|o| o.effect == Some(effect) && o.failure.is_none()).collect()
    }

    /// Reads that ran.
    #[must_use]
    pub fn reads(&self) -> Vec<FileOperation> {
        self.completed(FileEffect::Read)
    }

    /// Writes that ran.
    #[must_use]
    pub fn writes(&self) -> Vec<FileOperation> {
        self.completed(FileEffect::Write)
    }

    /// Restores that ran.
    #[must_use]
    pub fn recoveries(&self) -> Vec<FileOperation> {
        self.completed(FileEffect::Recovery)
    }

    /// Runs `action` on `path` with the tool's parsed `arguments` and logs it.
    ///
    /// # Errors
    /// The store's refusal (`resource_exists`, `resource_absent`,
    /// `snapshot_absent`, `version_conflict`, `unsupported_action`).
    pub fn execute(&self, action: &str, path: &[String], arguments: &Map<String, Value>) -> Result<Value, FileFailure> {
        let parsed = FileAction::parse(action);
        let outcome = match parsed {
            Some(known) => self.run(known, path, arguments),
            None => Err(FileFailure::new(FileFailureCode::UnsupportedAction, format!("no action `{action}`"))),
        };
        self.state.borrow_mut().log.push(FileOperation {
            action: action.to_string(),
            path: path.to_vec(),
            effect: parsed.map(FileAction::effect),
            failure: outcome.as_ref().err().map(|f| f.code),
        });
        outcome
    }

    fn run(&self, action: FileAction, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
        let mut state = self.state.borrow_mut();
        match action {
            FileAction::List => list(&state, path),
            FileAction::Stat => stat(&state, path),
            FileAction::Read => read(&state, path),
            FileAction::Search => search(&state, path, args),
            FileAction::Grep => grep(&state, path, args),
            FileAction::Create => create(&mut state, path, args),
            FileAction::Replace | FileAction::Append => write(&mut state, action, path, args),
            FileAction::Delete => delete(&mut state, path, args),
            FileAction::SnapshotCreate => snapshot_create(&mut state, path, args),
            FileAction::SnapshotList => snapshot_list(&state, path, args),
            FileAction::SnapshotRestore => snapshot_restore(&mut state, path, args),
        }
    }
}

fn under<'a>(state: &'a State, root: &'a [String]) -> impl Iterator<Item = (&'a Vec<String>, &'a FileEntry)> + 'a {
    state.files.iter().filter(move |(p, _)| is_under(p, root))
}

fn is_folder(state: &State, path: &[String]) -> bool {
    under(state, path).any(|(p, _)| p.len() > path.len())
}

fn limit(args: &Map<String, Value>) -> usize {
    args.get("limit").and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()).unwrap_or(usize::MAX)
}

fn list(state: &State, path: &[String]) -> Result<Value, FileFailure> {
    if !is_folder(state, path) {
        return Err(FileFailure::absent(path));
    }
    let mut children: BTreeMap<String, &'static str> = BTreeMap::new();
    for (p, _) in under(state, path).filter(|(p, _)| p.len() > path.len()) {
        let kind = if p.len() == path.len() + 1 { "file" } else { "folder" };
        children.insert(p[path.len()].clone(), kind);
    }
    let entries: Vec<Value> = children.into_iter().map(|(name, kind)| json!({"name": name, "kind": kind})).collect();
    Ok(json!({"path": path_value(path), "entries": entries}))
}

fn stat(state: &State, path: &[String]) -> Result<Value, FileFailure> {
    if let Some(entry) = state.files.get(path) {
        let size = entry.content.len();
        return Ok(json!({"path": path_value(path), "kind": "file", "size": size, "version": entry.version}));
    }
    if is_folder(state, path) {
        return Ok(json!({"path": path_value(path), "kind": "folder"}));
    }
    Err(FileFailure::absent(path))
}

fn read(state: &State, path: &[String]) -> Result<Value, FileFailure> {
    let entry = state.files.get(path).ok_or_else(|| FileFailure::absent(path))?;
    Ok(json!({"path": path_value(path), "content": entry.content, "version": entry.version}))
}

fn search(state: &State, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
    let query = args.get("query").and_then(Value::as_str).unwrap_or_default();
    let matches: Vec<Value> = under(state, path)
        .filter(|(p, e)| e.content.contains(query) || p.last().is_some_and(|n| n.contains(query)))
        .take(limit(args))
        .map(|(p, _)| path_value(p))
        .collect();
    Ok(json!({"path": path_value(path), "matches": matches}))
}

fn grep(state: &State, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
    let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or_default();
    let sensitive = args.get("caseSensitive").and_then(Value::as_bool).unwrap_or(true);
    let mode = args.get("mode").and_then(Value::as_str).unwrap_or("content");
    let count = |key: &str| args.get(key).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
    let (before, after) = (count("contextBefore"), count("contextAfter"));
    let fold = |text: &str| if sensitive { text.to_string() } else { text.to_lowercase() };
    let needle = fold(pattern);
    let mut results = Vec::new();
    for (p, entry) in under(state, path) {
        let lines: Vec<&str> = entry.content.lines().collect();
        let hits: Vec<usize> = (0..lines.len()).filter(|i| fold(lines[*i]).contains(&needle)).collect();
        if hits.is_empty() {
            continue;
        }
        let detail = match mode {
            "files" => json!({"path": path_value(p)}),
            "count" => json!({"path": path_value(p), "count": hits.len()}),
            _ => {
                let shown: Vec<Value> = hits
                    .iter()
                    .map(|&i| {
                        let from = i.saturating_sub(before);
                        let to = (i + after + 1).min(lines.len());
                        json!({"line": i + 1, "text": lines[from..to].join("\n")})
                    })
                    .collect();
                json!({"path": path_value(p), "lines": shown})
            }
        };
        results.push(detail);
    }
    Ok(json!({"path": path_value(path), "mode": mode, "results": results}))
}

fn check_version(entry: &FileEntry, args: &Map<String, Value>) -> Result<(), FileFailure> {
    match args.get("expectedVersion").and_then(Value::as_u64) {
        Some(expected) if expected != entry.version => Err(FileFailure::new(
            FileFailureCode::VersionConflict,
            format!("expected version {expected}, found {}", entry.version),
        )),
        _ => Ok(()),
    }
}

fn create(state: &mut State, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
    if state.files.contains_key(path) || is_folder(state, path) {
        return Err(FileFailure::new(FileFailureCode::ResourceExists, format!("{} exists", path.join("/"))));
    }
    let content = args.get("content").and_then(Value::as_str).unwrap_or_default().to_string();
    state.files.insert(path.to_vec(), FileEntry { content, version: 1 });
    Ok(json!({"path": path_value(path), "version": 1}))
}

fn write(
    state: &mut State,
    action: FileAction,
    path: &[String],
    args: &Map<String, Value>,
) -> Result<Value, FileFailure> {
    let entry = state.files.get_mut(path).ok_or_else(|| FileFailure::absent(path))?;
    check_version(entry, args)?;
    let content = args.get("content").and_then(Value::as_str).unwrap_or_default();
    if action == FileAction::Append {
        entry.content.push_str(content);
    } else {
        entry.content = content.to_string();
    }
    entry.version += 1;
    Ok(json!({"path": path_value(path), "version": entry.version}))
}

fn delete(state: &mut State, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
    if let Some(entry) = state.files.get(path) {
        check_version(entry, args)?;
        state.files.remove(path);
        return Ok(json!({"path": path_value(path), "deleted": 1}));
    }
    let recursive = args.get("recursive").and_then(Value::as_bool).unwrap_or(false);
    if !recursive || !is_folder(state, path) {
        return Err(FileFailure::absent(path));
    }
    let before = state.files.len();
    state.files.retain(|p, _| !is_under(p, path));
    Ok(json!({"path": path_value(path), "deleted": before - state.files.len()}))
}

fn snapshot_create(state: &mut State, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
    let files: BTreeMap<Vec<String>, FileEntry> = under(state, path).map(|(p, e)| (p.clone(), e.clone())).collect();
    if files.is_empty() {
        return Err(FileFailure::absent(path));
    }
    let id = format!("snapshot-{}", state.snapshot_order.len() + 1);
    let label = args.get("label").and_then(Value::as_str).map(str::to_string);
    let count = files.len();
    let snapshot = Snapshot { id: id.clone(), root: path.to_vec(), label, files };
    state.snapshot_order.push(id.clone());
    state.snapshots.insert(id.clone(), snapshot);
    Ok(json!({"snapshotId": id, "path": path_value(path), "files": count}))
}

fn snapshot_list(state: &State, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
    let listed: Vec<Value> = state
        .snapshot_order
        .iter()
        .filter_map(|id| state.snapshots.get(id))
        .filter(|s| s.files.keys().any(|p| is_under(p, path)) || is_under(&s.root, path))
        .take(limit(args))
        .map(|s| json!({"snapshotId": s.id, "path": path_value(&s.root), "label": s.label, "files": s.files.len()}))
        .collect();
    Ok(json!({"path": path_value(path), "snapshots": listed}))
}

fn snapshot_restore(state: &mut State, path: &[String], args: &Map<String, Value>) -> Result<Value, FileFailure> {
    let id = args.get("snapshotId").and_then(Value::as_str).unwrap_or_default();
    let snapshot = state
        .snapshots
        .get(id)
        .cloned()
        .ok_or_else(|| FileFailure::new(FileFailureCode::SnapshotAbsent, format!("no snapshot `{id}`")))?;
    let captured: Vec<(Vec<String>, FileEntry)> =
        snapshot.files.into_iter().filter(|(p, _)| is_under(p, path)).collect();
    if captured.is_empty() {
        return Err(FileFailure::absent(path));
    }
    if let Some(entry) = state.files.get(path) {
        check_version(entry, args)?;
    }
    for (p, captured_entry) in &captured {
        let version = state.files.get(p).map_or(1, |e| e.version + 1);
        state.files.insert(p.clone(), FileEntry { content: captured_entry.content.clone(), version });
    }
    Ok(json!({"snapshotId": id, "path": path_value(path), "restored": captured.len()}))
}
