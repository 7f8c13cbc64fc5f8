//! `certify` and `verify` from the command line: the committed Python seat
//! certified and verified, and every exit code they document.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the binary; its exit code and stdout.
fn run(args: &[&str]) -> (i32, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_sharedos-conformance")).args(args).current_dir(root()).output().unwrap();
    (output.status.code().unwrap(), String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_python_seat_certifies_and_its_bundle_verifies_until_one_byte_moves() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("python");
    let out = bundle.to_str().unwrap();
    let (code, said) = run(&["certify", "--column", "process:python-reference", "--out", out]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("process:python-reference  not_applicable: 11  not_implemented: 2  pass: 118"), "{said}");
    let (code, said) = run(&["verify", out]);
    assert_eq!(code, 0, "{said}");
    assert!(said.starts_with("verified: "), "{said}");
    let evidence = bundle.join("evidence.jsonl");
    let mut bytes = std::fs::read(&evidence).unwrap();
    let at = bytes.len() / 3;
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(&evidence, bytes).unwrap();
    let (code, said) = run(&["verify", out]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("FAIL evidence.jsonl: sha256 "), "{said}");
}

#[test]
fn verify_exits_3_on_what_is_not_a_bundle_or_not_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _) = run(&["verify", dir.path().to_str().unwrap()]);
    assert_eq!(code, 3);
    let key = dir.path().join("key.pem");
    std::fs::write(&key, "not a key").unwrap();
    let (code, _) = run(&["verify", dir.path().to_str().unwrap(), "--key", key.to_str().unwrap()]);
    assert_eq!(code, 3);
}

#[test]
fn certify_refuses_filters_unknown_columns_and_an_existing_bundle_with_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b");
    let out = out.to_str().unwrap();
    assert_eq!(run(&["certify", "--column", "model-scripted", "--case", "x", "--out", out]).0, 2);
    assert_eq!(run(&["certify", "--column", "no-such-column", "--out", out]).0, 2);
    assert_eq!(run(&["certify", "--out", out]).0, 2);
    assert_eq!(run(&["certify", "--column", "model-scripted", "--out", dir.path().to_str().unwrap()]).0, 2);
    assert!(!Path::new(out).exists());
}

#[test]
fn diff_exits_0_when_nothing_regressed_1_on_a_regression_and_3_on_unreadable_input() {
    let committed = "reports/conformance.json";
    let (code, said) = run(&["diff", committed, committed]);
    assert_eq!((code, said.as_str()), (0, "Comparable, nothing moved.\n"));
    let fixtures = "harness/evidence/tests/evidence/sharedos";
    let (v4, v5) = (format!("{fixtures}/judge-v4.json"), format!("{fixtures}/judge-v5.json"));
    let (code, said) = run(&["diff", &v4, &v5, "--format", "markdown"]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("#### Regressions (1)"), "{said}");
    let (code, said) = run(&["diff", &v4, &v5, "--format", "json"]);
    let parsed: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!((code, &parsed["comparable"]), (1, &serde_json::Value::Bool(false)));
    assert_eq!(run(&["diff", committed, "no-such-manifest.json"]).0, 3);
}

/// ADR 0007: two runs whose column seats another runtime are not compared
/// unless asked for; asked for, both runtimes are named before any cell.
#[test]
fn diff_of_two_runtimes_exits_3_unless_asked_across_runtimes_and_then_names_both_first() {
    let dir = tempfile::tempdir().unwrap();
    let committed = root().join("reports/conformance.json");
    let mut other: serde_json::Value = serde_json::from_slice(&std::fs::read(&committed).unwrap()).unwrap();
    other["columns"][0]["runtime"]["version"] = "9.9.9".into();
    let other_path = dir.path().join("other.json");
    std::fs::write(&other_path, serde_json::to_vec_pretty(&other).unwrap()).unwrap();
    let (a, b) = (committed.to_str().unwrap(), other_path.to_str().unwrap());
    let output = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args(["diff", a, b])
        .current_dir(root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(output.stdout.is_empty(), "no cell is compared");
    assert!(stderr.contains("column adversary-embedded seats another runtime in B"), "{stderr}");
    assert!(stderr.contains("--across-runtimes"), "{stderr}");
    let (code, said) = run(&["diff", a, b, "--across-runtimes"]);
    assert_eq!(code, 0, "{said}");
    let first = said.lines().find(|line| line.contains("seats another runtime")).unwrap_or_default();
    assert!(first.contains("9.9.9") && first.contains("0.1.0"), "{said}");
}
