//! The one rule for a repeated cell, end to end: a runtime whose runs of
//! one cell pass and fail in a set pattern (the stand-in
//! `harness/process/tests/standins/patterned.py`, on a real-clock seat,
//! so no golden file is compared) fails the run whichever of its runs
//! failed, and the exit code, the human lines, the JUnit file and
//! `check --verdicts` say the same thing of it.

use std::path::{Path, PathBuf};
use std::process::Command;

const CASE: &str = "bounded-grant";
const CELL: &str = "bounded-grant/single-use-write-grant/process:patterned";

/// A scratch root with the committed cases and scripts.
fn scratch_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for folder in ["cases", "adversaries"] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.path().join(folder).join(entry.file_name())).unwrap();
        }
    }
    dir
}

/// A seat playing its turns as `pattern` says (`p` plays the script, `f`
/// makes no step), written in `root`.
fn seat(root: &Path, pattern: &str) -> PathBuf {
    let standin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../process/tests/standins/patterned.py");
    let seat = serde_json::json!({
        "name": "patterned", "label": "Patterned", "description": "passes and fails in a set pattern",
        "kind": "scripted", "command": "python3", "args": [standin, pattern], "passEnv": ["PATH"],
        "clock": "real",
    });
    let file = root.join(format!("seat-{pattern}.json"));
    std::fs::write(&file, seat.to_string()).unwrap();
    file
}

/// Runs `command` over the one cell, K = `repeat` times, on one worker
/// (so the seat's turns are the cell's runs, in order).
fn run(root: &Path, pattern: &str, command: &str, repeat: &str, extra: &[&str]) -> (i32, String) {
    let seat = seat(root, pattern);
    let output = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args([command, "--case", CASE, "--column", "process:patterned", "--jobs", "1", "--repeat", repeat])
        .args(["--seat", seat.to_str().unwrap()])
        .args(extra)
        .current_dir(root)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap(), said)
}

#[test]
fn a_flaky_cell_fails_the_run_whichever_of_its_runs_failed() {
    let dir = scratch_root();
    let junit = dir.path().join("junit.xml");
    let junit_arg = ["--junit", junit.to_str().unwrap()];
    // Pass then fail, and fail, fail then pass: the same flaky cell.
    for (pattern, sample) in [
        ("pf", "1 of 2 runs passed (pass, not_exercised)"),
        ("ffp", "1 of 3 runs passed (not_exercised, not_exercised, pass)"),
    ] {
        let (code, said) = run(dir.path(), pattern, "check", &pattern.len().to_string(), &junit_arg);
        assert_eq!(code, 1, "{pattern}: {said}");
        assert!(said.contains(&format!("FLAKY {CELL}: {sample}\n")), "{said}");
        assert!(!said.contains("FAIL "), "one line says it: {said}");
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert!(xml.contains("failures=\"1\""), "{xml}");
        assert!(xml.contains(&format!("<failure message=\"flaky: {sample}\" type=\"flaky\"/>")), "{xml}");
        assert!(!xml.contains("<rerunFailure"), "not read as failing every run: {xml}");
    }
    // Every run passed: the run passes, and so does its test case.
    let (code, said) = run(dir.path(), "p", "check", "3", &junit_arg);
    assert_eq!(code, 0, "{said}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"0\"") && !xml.contains("Failure"), "{xml}");
}

#[test]
fn check_verdicts_holds_a_repeated_cell_to_what_its_runs_come_to() {
    let dir = scratch_root();
    let verdicts = dir.path().join("verdicts.json");
    let verdicts_arg = ["--verdicts", verdicts.to_str().unwrap()];
    // Committed: pass, fail, pass, a flaky cell the file accepts.
    let (code, said) = run(dir.path(), "pf", "run", "3", &verdicts_arg);
    assert_eq!(code, 0, "{said}");
    assert!(std::fs::read_to_string(&verdicts).unwrap().contains("\"passes\": 2"));
    // Fail, pass, fail: another rate, the same outcome, no drift.
    let (code, said) = run(dir.path(), "fp", "check", "3", &verdicts_arg);
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains("DRIFT"), "{said}");
    // Every run passes now: the verdict moved, and says how.
    let (code, said) = run(dir.path(), "p", "check", "3", &verdicts_arg);
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!("DRIFT {CELL}: flaky (2 of 3 runs passed) -> pass (3 of 3 runs passed)\n")),
        "{said}"
    );
}
