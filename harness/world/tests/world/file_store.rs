//! The world's file store on its own: seeds, the twelve actions, the
//! documented failures and the operation log.

use serde_json::{json, Map, Value};
use sharedos_world::constants::{segments, DRAFT_FILE, LEDGER_ENTRY, POLICY_FILE, SCRATCH, SEEDED_SNAPSHOT, WORKSPACE};
use sharedos_world::file_store::{FileAction, FileEffect, FileFailureCode, FileStore};

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn code(store: &FileStore, action: &str, path: &[&str], a: Value) -> FileFailureCode {
    store.execute(action, &segments(path), &args(a)).unwrap_err().code
}

#[test]
fn seeds_the_three_files_and_the_first_snapshot() {
    let store = FileStore::seeded();
    assert_eq!(store.content(&segments(&POLICY_FILE)).as_deref(), Some("retention: 90 days"));
    assert_eq!(store.content(&segments(&DRAFT_FILE)).as_deref(), Some("draft"));
    assert_eq!(store.content(&segments(&LEDGER_ENTRY)).as_deref(), Some("opened"));
    let snapshot = store.snapshot(SEEDED_SNAPSHOT).unwrap();
    let captured: Vec<_> = snapshot.files.keys().cloned().collect();
    assert_eq!(captured, vec![segments(&POLICY_FILE), segments(&DRAFT_FILE)]);
    assert!(store.operations().is_empty(), "seeding is trusted setup, not an operation");
}

#[test]
fn create_on_an_existing_file_fails_resource_exists() {
    let store = FileStore::seeded();
    assert_eq!(code(&store, "create", &DRAFT_FILE, json!({"content": "x"})), FileFailureCode::ResourceExists);
    assert_eq!(FileFailureCode::ResourceExists.as_str(), "resource_exists");
    assert_eq!(store.content(&segments(&DRAFT_FILE)).as_deref(), Some("draft"));
}

#[test]
fn replace_append_and_delete_on_nothing_fail_resource_absent() {
    let store = FileStore::seeded();
    let ghost = ["Workspace", "scratch", "ghost.md"];
    for action in ["replace", "append", "delete", "read"] {
        assert_eq!(code(&store, action, &ghost, json!({"content": "x"})), FileFailureCode::ResourceAbsent, "{action}");
    }
    assert_eq!(FileFailureCode::ResourceAbsent.as_str(), "resource_absent");
}

#[test]
fn restore_from_an_unknown_snapshot_fails_snapshot_absent() {
    let store = FileStore::seeded();
    let failure = code(&store, "snapshot:restore", &DRAFT_FILE, json!({"snapshotId": "snapshot-9"}));
    assert_eq!(failure, FileFailureCode::SnapshotAbsent);
    assert_eq!(failure.as_str(), "snapshot_absent");
}

#[test]
fn unknown_actions_fail_unsupported_action_and_are_logged() {
    let store = FileStore::seeded();
    assert_eq!(code(&store, "purge", &WORKSPACE, json!({})), FileFailureCode::UnsupportedAction);
    let log = store.operations();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].action, "purge");
    assert_eq!(log[0].effect, None);
    assert_eq!(log[0].failure, Some(FileFailureCode::UnsupportedAction));
    assert_eq!(store.files().len(), 3, "nothing was purged");
}

#[test]
fn every_action_parses_from_its_capability_spelling() {
    for action in FileAction::ALL {
        assert_eq!(FileAction::parse(action.as_str()), Some(action));
    }
    assert_eq!(FileAction::parse("purge"), None);
}

#[test]
fn writes_bump_versions_and_honour_expected_versions() {
    let store = FileStore::seeded();
    let draft = segments(&DRAFT_FILE);
    store.execute("replace", &draft, &args(json!({"content": "conformance"}))).unwrap();
    store.execute("append", &draft, &args(json!({"content": "!", "expectedVersion": 2}))).unwrap();
    assert_eq!(store.file(&draft).unwrap().content, "conformance!");
    assert_eq!(store.file(&draft).unwrap().version, 3);
    let stale = store.execute("replace", &draft, &args(json!({"content": "x", "expectedVersion": 1}))).unwrap_err();
    assert_eq!(stale.code, FileFailureCode::VersionConflict);
}

#[test]
fn reads_list_stat_search_and_grep_answer_without_writing() {
    let store = FileStore::seeded();
    let listed = store.execute("list", &segments(&WORKSPACE), &Map::new()).unwrap();
    assert_eq!(
        listed["entries"],
        json!([{"name": "ledger", "kind": "folder"}, {"name": "policy.md", "kind": "file"}, {"name": "scratch", "kind": "folder"}])
    );
    let stat = store.execute("stat", &segments(&SCRATCH), &Map::new()).unwrap();
    assert_eq!(stat["kind"], "folder");
    let read = store.execute("read", &segments(&POLICY_FILE), &Map::new()).unwrap();
    assert_eq!(read["content"], "retention: 90 days");
    let search = store.execute("search", &segments(&WORKSPACE), &args(json!({"query": "90"}))).unwrap();
    assert_eq!(search["matches"], json!([["Workspace", "policy.md"]]));
    let grep = store
        .execute(
            "grep",
            &segments(&WORKSPACE),
            &args(json!({"pattern": "DRAFT", "caseSensitive": false, "mode": "files"})),
        )
        .unwrap();
    assert_eq!(grep["results"], json!([{"path": ["Workspace", "scratch", "draft.md"]}]));
    assert_eq!(store.reads().len(), 5);
    assert!(store.writes().is_empty());
}

#[test]
fn snapshots_are_created_listed_and_restored_as_recoveries() {
    let store = FileStore::seeded();
    let (scratch, draft) = (segments(&SCRATCH), segments(&DRAFT_FILE));
    let created = store.execute("snapshot:create", &scratch, &args(json!({"label": "before"}))).unwrap();
    assert_eq!(created["snapshotId"], "snapshot-2");
    let listed = store.execute("snapshot:list", &scratch, &Map::new()).unwrap();
    let ids: Vec<_> = listed["snapshots"].as_array().unwrap().iter().map(|s| s["snapshotId"].clone()).collect();
    assert_eq!(ids, vec![json!("snapshot-1"), json!("snapshot-2")]);
    store.execute("replace", &draft, &args(json!({"content": "changed"}))).unwrap();
    store.execute("snapshot:restore", &draft, &args(json!({"snapshotId": "snapshot-1"}))).unwrap();
    assert_eq!(store.content(&draft).as_deref(), Some("draft"));
    assert_eq!(store.recoveries().len(), 1);
    assert_eq!(store.writes().len(), 2, "snapshot:create and replace");
    assert_eq!(store.recoveries()[0].effect, Some(FileEffect::Recovery));
}

#[test]
fn create_and_recursive_delete_change_the_tree() {
    let store = FileStore::seeded();
    let note = vec!["Workspace".to_string(), "scratch".to_string(), "note.md".to_string()];
    store.execute("create", &note, &args(json!({"content": "hello"}))).unwrap();
    assert_eq!(store.file(&note).unwrap().version, 1);
    let folder = segments(&SCRATCH);
    let refused = store.execute("delete", &folder, &args(json!({"recursive": false}))).unwrap_err();
    assert_eq!(refused.code, FileFailureCode::ResourceAbsent);
    let deleted = store.execute("delete", &folder, &args(json!({"recursive": true}))).unwrap();
    assert_eq!(deleted["deleted"], 2);
    assert_eq!(store.files().len(), 2);
}
