//! The binary against a hostile environment: a closed stdout, an absurd
//! worker count, a file it cannot write.

use std::path::Path;
use std::process::{Command, Stdio};

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"));
    command.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    command
}

#[test]
fn a_closed_stdout_ends_the_printing_not_the_run_and_the_junit_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let mut child = binary()
        .args(["check", "--format", "jsonl", "--junit", junit.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the first line (`| head -0`).
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(std::fs::read_to_string(&junit).unwrap().contains("<testsuites"));
}

#[test]
fn any_worker_count_is_clamped_to_the_work() {
    for jobs in ["0", "100000"] {
        let output = binary().args(["check", "--case", "forged-grant", "--jobs", jobs]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "--jobs {jobs}: {}", String::from_utf8_lossy(&output.stdout));
    }
}

#[test]
fn a_junit_file_that_cannot_be_written_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    // A folder cannot be made where a file is, whoever runs the test.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let junit = file.join("junit.xml");
    let output =
        binary().args(["check", "--case", "forged-grant", "--junit", junit.to_str().unwrap()]).output().unwrap();
    assert_eq!(output.status.code(), Some(74));
    assert!(String::from_utf8_lossy(&output.stderr).contains("a-file"));
}
