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
        .args(["check", "--column", "adversary-embedded", "--format", "jsonl", "--junit", junit.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the first line (`| head -0`).
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(std::fs::read_to_string(&junit).unwrap().contains("<testsuite "));
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
    // A folder no file can be made in, whoever runs the test.
    let junit = "/proc/self/task/junit.xml";
    let output = binary().args(["check", "--case", "forged-grant", "--junit", junit]).output().unwrap();
    assert_eq!(output.status.code(), Some(74));
    assert!(String::from_utf8_lossy(&output.stderr).contains(junit));
}

/// Copies `from` into `to`, folders and files.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A scratch copy of the repository's `folders`.
fn repository_copy(folders: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for folder in folders {
        copy_tree(&repo.join(folder), &dir.path().join(folder));
    }
    dir
}

/// Runs `command` on the copy at `root`: its exit code and stdout.
fn run_in(root: &Path, command: &str) -> (i32, String) {
    let output = binary().args([command, "--jobs", "2"]).current_dir(root).output().unwrap();
    (output.status.code().unwrap(), String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Issue 29, exit codes: a family or case the suite does not know is a
/// usage error (2), as an unknown column is; known names that select no
/// cell exit 4.
#[test]
fn an_unknown_family_or_case_is_a_usage_error_and_known_filters_selecting_nothing_exit_4() {
    let code = |args: &[&str]| {
        let output = binary().args(args).output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (exit, told) = code(&["list", "--family", "nope"]);
    assert_eq!(exit, Some(2), "{told}");
    assert!(told.contains("error: no family `nope` (one of matrix, drain,"), "{told}");
    let (exit, told) = code(&["list", "--case", "nope"]);
    assert_eq!(exit, Some(2), "{told}");
    assert!(told.contains("error: no case `nope`"), "{told}");
    assert_eq!(code(&["list", "--column", "nope"]).0, Some(2));
    let (exit, told) = code(&["list", "--case", "forged-grant", "--family", "drain"]);
    assert_eq!(exit, Some(4), "{told}");
}

/// Issue 29, untrusted text: an id holding terminal controls is printed
/// escaped, so it can neither erase a line nor fake one.
#[test]
fn terminal_controls_in_untrusted_text_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("reports/conformance.json")).unwrap()).unwrap();
    manifest["rows"][0]["caseId"] = "forged\u{1b}[2K\rComparable, nothing moved.\u{202e}".into();
    let hostile = dir.path().join("hostile.json");
    std::fs::write(&hostile, serde_json::to_string(&manifest).unwrap()).unwrap();
    for format in ["human", "markdown", "json"] {
        let output = binary()
            .args(["diff", "reports/conformance.json", hostile.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        let shown = String::from_utf8(output.stdout).unwrap();
        // JSON escapes a carriage return its own way; the terminal path, as `\u000d`.
        let escaped =
            if format == "json" { "forged\\u001b[2K\\rComparable" } else { "forged\\u001b[2K\\u000dComparable" };
        assert!(shown.contains(escaped), "{format}: {shown}");
        assert!(!shown.contains(['\u{1b}', '\r', '\u{202e}']), "{format}: a control reached the terminal");
        if format == "json" {
            let read: serde_json::Value = serde_json::from_str(&shown).unwrap();
            assert!(read.to_string().contains("forged\\u001b[2K\\rComparable"), "the JSON still says what is there");
        }
    }
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn stray_golden_files_are_reported_by_check_and_removed_by_bless() {
        let dir = repository_copy(&["cases", "adversaries", "golden", "reports", "harness/seats"]);
        let run = |command: &str| run_in(dir.path(), command);
        assert_eq!(run("check").0, 0);
        let orphan = dir.path().join("golden/forged-grant/gone.adversary-embedded.json");
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let ended_writer = ended.id();
        ended.wait().unwrap();
        let leftover =
            dir.path().join(format!("golden/forged-grant/.baseline.adversary-embedded.json.tmp-{ended_writer}"));
        // A write under way in a process that still runs: this test's own.
        let writing = dir
            .path()
            .join(format!("golden/forged-grant/.baseline.adversary-embedded.json.tmp-{}", std::process::id()));
        let foreign = dir.path().join("golden/forged-grant/baseline.process.someone-else.json");
        for path in [&orphan, &leftover, &writing, &foreign] {
            std::fs::write(path, "{}").unwrap();
        }
        let (code, said) = run("check");
        assert_eq!(code, 1, "{said}");
        assert!(said.contains("gone.adversary-embedded.json: no cell of the suite writes this golden file"), "{said}");
        assert!(said.contains(&format!(".tmp-{ended_writer}: a temporary file an interrupted write left")), "{said}");
        assert!(!said.contains(&format!(".tmp-{}", std::process::id())), "a running write is not a leftover: {said}");
        assert!(!said.contains("someone-else"), "another seat's golden file is not ours: {said}");
        let (code, said) = run("bless");
        assert_eq!(code, 0, "{said}");
        assert!(!orphan.exists() && !leftover.exists() && foreign.exists());
        assert!(writing.exists(), "bless removed another process's write under way");
        std::fs::remove_file(&writing).unwrap();
        assert_eq!(run("check").0, 0);
    }

    #[test]
    #[ignore = "heavy"]
    fn a_fifo_in_place_of_a_report_is_stale_for_check_and_replaced_by_run() {
        let dir = repository_copy(&["cases", "adversaries", "golden", "harness/seats"]);
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        std::fs::create_dir_all(dir.path().join("reports")).unwrap();
        std::fs::copy(repo.join("reports/conformance.md"), dir.path().join("reports/conformance.md")).unwrap();
        let report = dir.path().join("reports/conformance.json");
        assert!(Command::new("mkfifo").arg(&report).status().unwrap().success());
        let run = |command: &str| run_in(dir.path(), command);
        let (code, said) = run("check");
        assert_eq!(code, 1, "{said}");
        assert!(said.contains("reports/conformance.json is stale"), "{said}");
        assert_eq!(run("run").0, 0);
        assert!(std::fs::symlink_metadata(&report).unwrap().is_file());
        assert_eq!(std::fs::read(&report).unwrap(), std::fs::read(repo.join("reports/conformance.json")).unwrap());
    }
}
