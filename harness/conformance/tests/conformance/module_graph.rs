//! The workspace's import graph: no crate's files import one another in a
//! circle, and no stage of `conformance` imports a later one beyond the
//! list `scripts/module-graph.py` still allows, which may only shrink.

use std::path::Path;
use std::process::Command;

#[test]
fn no_circle_and_no_new_back_up_import() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new("python3")
        .arg("scripts/module-graph.py")
        .arg("--check")
        .current_dir(&root)
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&output.stdout);
    // One summary line per crate: the script read them all.
    let crates = std::fs::read_dir(root.join("harness"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("src").is_dir())
        .count();
    assert_eq!(text.lines().filter(|l| l.starts_with("== ")).count(), crates, "{text}");
    assert!(output.status.success(), "{text}{}", String::from_utf8_lossy(&output.stderr));
}
