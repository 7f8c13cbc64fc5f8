//! Files that are not what they are named: a FIFO where a case or a golden
//! file is expected is refused at once (a read would hang), a linked case
//! is followed rather than silently dropped.

use crate::support::{scratch_suite, suite_root};
use sharedos_grading::input::loader::load_suite;
use sharedos_grading::output::golden::{compare, GoldenComparison, Snapshot};
use sharedos_grading::vocab::CellKey;
use std::path::Path;
use std::process::Command;

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A suite of one committed case and its script.
fn one_case_suite(name: &str) -> std::path::PathBuf {
    let root = scratch_suite("hostile", name);
    std::fs::copy(suite_root().join("cases/forged-grant.json"), root.join("cases/forged-grant.json")).unwrap();
    std::fs::copy(
        suite_root().join("adversaries/kernel.forged-grant.json"),
        root.join("adversaries/kernel.forged-grant.json"),
    )
    .unwrap();
    root
}

#[test]
fn a_fifo_named_like_a_case_is_refused_not_read() {
    let root = one_case_suite("fifo");
    mkfifo(&root.join("cases/stuck.json"));
    let error = load_suite(&root).unwrap_err();
    assert_eq!(error.file, Path::new("cases/stuck.json"));
    assert!(error.expected.contains("not a regular file"), "{error}");
}

#[test]
fn a_linked_case_is_followed_into_the_suite() {
    let root = one_case_suite("link");
    let case = root.join("cases/forged-grant.json");
    let target = root.join("forged-grant.json");
    std::fs::rename(&case, &target).unwrap();
    std::os::unix::fs::symlink(&target, &case).unwrap();
    let suite = load_suite(&root).unwrap();
    let ids: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["forged-grant"]);
}

#[test]
fn a_fifo_golden_file_is_unreadable_not_missing_and_not_waited_on() {
    let root = scratch_suite("hostile", "golden");
    let key = CellKey { case: "c".into(), condition: "d".into(), column: "adversary-embedded".into() };
    let path = root.join("golden").join(key.relative_path());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    mkfifo(&path);
    let snapshot = Snapshot::of(&serde_json::json!({ "cell": 1 }));
    match compare(&root.join("golden"), &key, &snapshot) {
        GoldenComparison::Unreadable { detail, .. } => assert!(detail.contains("not a regular file"), "{detail}"),
        other => panic!("expected unreadable, got {other:?}"),
    }
}
