//! `certify --root` and `diff` from a folder that is not the repository:
//! every file is read from the root named, never from the current folder,
//! and what a manifest holds is printed one row a line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Runs the binary in `folder`.
fn run_in(folder: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sharedos-conformance")).args(args).current_dir(folder).output().unwrap()
}

/// Issue: the seat file was read from the current folder, not `--root`:
/// from elsewhere the whole matrix ran before certify failed.
#[test]
fn certify_from_another_folder_bundles_the_seat_file_of_its_root() {
    let elsewhere = tempfile::tempdir().unwrap();
    let out = elsewhere.path().join("b.tar");
    let root = root();
    let args = ["certify", "--root", root.to_str().unwrap(), "--column", "process:python-reference"];
    let output = run_in(elsewhere.path(), &[&args[..], &["--out", out.to_str().unwrap()]].concat());
    let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let unpacked = sharedos_evidence::archive::unpack(&out).unwrap();
    let bundled = std::fs::read(unpacked.path().join("suite/harness/seats/python-reference.json")).unwrap();
    assert_eq!(bundled, std::fs::read(root.join("harness/seats/python-reference.json")).unwrap());
    let output = run_in(elsewhere.path(), &["verify", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
}

/// Issue: a line break in a case id split a row of `diff`'s table in two.
#[test]
fn diff_prints_a_case_id_with_controls_on_one_escaped_line() {
    let dir = tempfile::tempdir().unwrap();
    let committed = root().join("reports/conformance.json");
    let mut manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&committed).unwrap()).unwrap();
    let case = manifest["rows"][0]["caseId"].as_str().unwrap().to_string();
    manifest["rows"][0]["caseId"] = format!("{case}\nfake row\u{1b}[2K").into();
    let hostile = dir.path().join("hostile.json");
    std::fs::write(&hostile, serde_json::to_string(&manifest).unwrap()).unwrap();
    let output = run_in(dir.path(), &["diff", committed.to_str().unwrap(), hostile.to_str().unwrap()]);
    let shown = String::from_utf8(output.stdout).unwrap();
    let columns = manifest["columns"].as_array().unwrap().len();
    let added: Vec<&str> = shown.lines().filter(|l| l.contains("\\u000afake row\\u001b[2K/")).collect();
    assert_eq!(added.len(), columns, "one line a cell: {shown}");
    assert!(added.iter().all(|l| l.starts_with(&format!("  {case}\\u000afake row"))), "{shown}");
    assert!(!shown.lines().any(|l| l.starts_with("fake row")), "{shown}");
    assert!(!shown.contains(|c: char| c.is_control() && c != '\n'), "{shown}");
}

/// Issue: a `|` in a case id split a row of `diff`'s Markdown table.
#[test]
fn diff_markdown_keeps_a_case_id_with_a_pipe_in_one_cell() {
    let dir = tempfile::tempdir().unwrap();
    let committed = root().join("reports/conformance.json");
    let mut manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&committed).unwrap()).unwrap();
    let case = manifest["rows"][0]["caseId"].as_str().unwrap().to_string();
    manifest["rows"][0]["caseId"] = format!("{case}|forged|cell").into();
    let hostile = dir.path().join("hostile.json");
    std::fs::write(&hostile, serde_json::to_string(&manifest).unwrap()).unwrap();
    let output =
        run_in(dir.path(), &["diff", "--format", "markdown", committed.to_str().unwrap(), hostile.to_str().unwrap()]);
    let shown = String::from_utf8(output.stdout).unwrap();
    let columns = manifest["columns"].as_array().unwrap().len();
    let added: Vec<&str> = shown.lines().filter(|l| l.contains("forged")).collect();
    assert_eq!(added.len(), columns, "one row a cell: {shown}");
    for row in added {
        // Four cell borders, every other `|` escaped.
        let borders = row.match_indices('|').filter(|(at, _)| !row[..*at].ends_with('\\')).count();
        assert_eq!(borders, 4, "{row}");
        assert!(row.contains(&format!("`{case}\\|forged\\|cell/")), "{row}");
    }
}
