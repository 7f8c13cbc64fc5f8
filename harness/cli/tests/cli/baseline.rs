//! `--baseline` from the command line: a listed failure keeps the run
//! green, an unlisted one fails it, a listed cell that passes fails it as
//! stale, and a baseline naming a cell the suite lacks is refused with
//! its place.

use std::path::{Path, PathBuf};
use std::process::Command;

const CASE: &str = "bounded-grant";
const CONDITION: &str = "single-use-write-grant";

/// A scratch suite (the committed cases and scripts) with a seat whose
/// runtime ends every turn at once, its golden files blessed.
fn lazy_suite() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for folder in ["cases", "adversaries"] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.path().join(folder).join(entry.file_name())).unwrap();
        }
    }
    let standin = root.join("harness/process/tests/standins/standin.py");
    let seat = serde_json::json!({
        "name": "lazy", "label": "Lazy", "description": "ends every turn at once", "kind": "prompted",
        "command": "python3", "args": [standin, "complete"], "passEnv": ["PATH"],
    });
    let seat_file = dir.path().join("lazy.json");
    std::fs::write(&seat_file, seat.to_string()).unwrap();
    let (code, said) = run(dir.path(), &["bless", "--case", CASE]);
    assert_eq!(code, 1, "the lazy column fails its row: {said}");
    (dir, seat_file)
}

fn run(root: &Path, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args(args)
        .args(["--seat", root.join("lazy.json").to_str().unwrap()])
        .current_dir(root)
        .output()
        .unwrap();
    (output.status.code().unwrap(), String::from_utf8_lossy(&output.stdout).into_owned())
}

fn baseline(root: &Path, column: &str, case: &str) -> String {
    let text = format!(
        "version = 1\n\n[[known-failure]]\ncase = \"{case}\"\ncondition = \"{CONDITION}\"\ncolumn = \"{column}\"\nreason = \"no call yet\"\n"
    );
    let path = root.join("baseline.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_known_failure_keeps_the_run_green_and_an_unlisted_one_does_not() {
    let (dir, _seat) = lazy_suite();
    let (code, said) = run(dir.path(), &["check", "--case", CASE]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains(&format!("FAIL {CASE}/{CONDITION}/process:lazy")), "{said}");
    let listed = baseline(dir.path(), "process:lazy", CASE);
    let (code, said) = run(dir.path(), &["check", "--case", CASE, "--baseline", &listed]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains(&format!("KNOWN {CASE}/{CONDITION}/process:lazy: no call yet")), "{said}");
    let (_, events) = run(dir.path(), &["check", "--case", CASE, "--baseline", &listed, "--format", "jsonl"]);
    let events: Vec<serde_json::Value> = events.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let cell = events.iter().find(|e| e["column"] == "process:lazy").unwrap();
    assert_eq!(cell["baseline"]["verdict"], "known_failure");
    let finished = events.last().unwrap();
    assert_eq!((finished["failing"].as_u64(), finished["knownFailures"].as_u64()), (Some(0), Some(1)));
}

#[test]
fn a_listed_cell_that_passes_fails_the_run_as_stale() {
    let (dir, _seat) = lazy_suite();
    let stale = baseline(dir.path(), "adversary-embedded", CASE);
    let junit = dir.path().join("junit.xml");
    let args = ["check", "--case", CASE, "--baseline", &stale, "--junit", junit.to_str().unwrap()];
    let (code, said) = run(dir.path(), &args);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains(&format!("STALE {CASE}/{CONDITION}/adversary-embedded")), "{said}");
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains("stale known failure (no call yet)"), "{xml}");
}

#[test]
fn a_baseline_naming_no_cell_of_the_suite_is_refused_with_its_place() {
    let (dir, _seat) = lazy_suite();
    let unknown = baseline(dir.path(), "process:lazy", "no-such-case");
    let output = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args(["check", "--baseline", &unknown, "--seat", dir.path().join("lazy.json").to_str().unwrap()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("baseline.toml: at /known-failure/0/case: expected the id of a case"), "{said}");
}
