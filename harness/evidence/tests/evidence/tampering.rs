//! Every kind of tampering is caught, and the failure names its place.

use crate::support::{codes, copy_of_bundle, read_lines, reseal, scratch, suite_root, verify_plain, write_lines};
use serde_json::Value;
use sharedos_conformance_metadata::failure::Failure;
use sharedos_evidence::bundle::{list_files, EVIDENCE_FILE, MANIFEST_FILE, STATEMENT_FILE};
use sharedos_evidence::verify::{verify, VerifyOptions};
use std::path::Path;

fn read_manifest(bundle: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(bundle.join(MANIFEST_FILE)).unwrap()).unwrap()
}

fn write_manifest(bundle: &Path, manifest: &Value) {
    std::fs::write(bundle.join(MANIFEST_FILE), serde_json::to_vec_pretty(manifest).unwrap()).unwrap();
}

#[test]
fn a_record_removed_moves_the_evidence_root() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let mut lines = read_lines(&bundle);
    let (index, line) = lines
        .iter_mut()
        .enumerate()
        .find(|(_, l)| l["grading"]["records"].as_array().unwrap().len() > 1)
        .expect("a multi-turn cell");
    line["grading"]["records"].as_array_mut().unwrap().pop();
    line["recordHashes"].as_array_mut().unwrap().pop();
    write_lines(&bundle, &lines);
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    assert!(codes(&verification).contains(&"hash_mismatch"), "{:?}", verification.failures);
    let root = verification.failures.iter().find(|f| f.place().pointer == "/evidenceRoot");
    assert!(root.is_some_and(|f| f.place().file == MANIFEST_FILE), "{:?}", verification.failures);
    // The cell graded again over one turn fewer is not the stated cell.
    let regraded = verification.failures.iter().any(|f| f.place().line == Some(index + 1));
    assert!(regraded, "line {} not named: {:?}", index + 1, verification.failures);
}

#[test]
fn a_cell_removed_is_missing() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let mut lines = read_lines(&bundle);
    let removed = lines.remove(4);
    write_lines(&bundle, &lines);
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    let cell = format!(
        "{}/{}/{}",
        removed["case"].as_str().unwrap(),
        removed["condition"].as_str().unwrap(),
        removed["column"].as_str().unwrap()
    );
    let missing = verification.failures.iter().any(|f| matches!(f, Failure::MissingCell { cell: c, .. } if *c == cell));
    assert!(missing, "{:?}", verification.failures);
}

#[test]
fn an_edited_verdict_is_graded_again_and_named() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let mut manifest = read_manifest(&bundle);
    let cell = &mut manifest["rows"][0]["cells"][0];
    assert_eq!(cell["status"], "pass");
    cell["status"] = Value::from("fail");
    write_manifest(&bundle, &manifest);
    let mut lines = read_lines(&bundle);
    lines[0]["cell"]["status"] = Value::from("fail");
    write_lines(&bundle, &lines);
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    let places: Vec<String> = verification
        .failures
        .iter()
        .filter(|f| f.code() == "verdict_mismatch")
        .map(|f| f.place().to_string())
        .collect();
    assert_eq!(places, ["evidence.jsonl:1 /cell/status", "manifest.json /rows/0/cells/0/status"]);
}

/// ADR 0007: a manifest names the runtime its records name; one claiming
/// another runtime (here another version) than the records does not verify.
#[test]
fn a_column_runtime_edited_to_name_another_runtime_is_named() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let mut manifest = read_manifest(&bundle);
    let runtime = &mut manifest["columns"][0]["runtime"];
    assert!(runtime["id"].is_string(), "the bundle's column names its runtime: {runtime}");
    runtime["version"] = Value::from("9.9.9");
    write_manifest(&bundle, &manifest);
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    let places: Vec<String> = verification.failures.iter().map(|f| f.place().to_string()).collect();
    assert_eq!(places, ["manifest.json /columns/0/runtime"], "{:?}", verification.failures);
}

#[test]
fn an_edited_record_with_its_hash_restated_moves_the_root() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let mut lines = read_lines(&bundle);
    let record = &mut lines[2]["grading"]["records"][0];
    record["recordedAt"] = Value::from("2000-01-01T00:00:00.000Z");
    let parsed: sharedos_model::record::ExecutionRecord = serde_json::from_value(record.clone()).unwrap();
    let hash = sharedos_grading::identity::sets::record_hash(&parsed).unwrap();
    lines[2]["recordHashes"][0] = Value::from(hash);
    write_lines(&bundle, &lines);
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    let pointers: Vec<String> = verification.failures.iter().map(|f| f.place().to_string()).collect();
    assert!(pointers.contains(&"manifest.json /evidenceRoot".to_string()), "{pointers:?}");
    assert!(pointers.contains(&"statement.json /predicate/evidenceRoot".to_string()), "{pointers:?}");
}

#[test]
fn a_dropped_case_moves_the_case_set_and_leaves_cells_missing() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let case_file = list_files(&bundle).unwrap().into_iter().find(|f| f.starts_with("suite/cases/")).unwrap();
    let case: Value = serde_json::from_slice(&std::fs::read(bundle.join(&case_file)).unwrap()).unwrap();
    let id = case["id"].as_str().unwrap().to_string();
    std::fs::remove_file(bundle.join(&case_file)).unwrap();
    let mut manifest = read_manifest(&bundle);
    manifest["rows"].as_array_mut().unwrap().retain(|r| r["caseId"] != id.as_str());
    for family in manifest["families"].as_array_mut().unwrap() {
        family["rows"].as_array_mut().unwrap().retain(|r| r["caseId"] != id.as_str());
    }
    write_manifest(&bundle, &manifest);
    let mut lines = read_lines(&bundle);
    lines.retain(|l| l["case"] != id.as_str());
    write_lines(&bundle, &lines);
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    let pointers: Vec<String> = verification.failures.iter().map(|f| f.place().to_string()).collect();
    assert!(pointers.contains(&"manifest.json /caseSetHash".to_string()), "{pointers:?}");
    // Against the canonical suite, the bundle's case set is not it.
    let canonical = suite_root();
    let options = VerifyOptions { suite: Some(&canonical), ..VerifyOptions::default() };
    let against = verify(&bundle, options).unwrap();
    assert!(against.failures.iter().any(|f| f.place().file == "suite"), "{:?}", against.failures);
}

#[test]
fn a_bundle_file_that_is_a_symlink_or_a_fifo_is_refused_not_followed() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let manifest = bundle.join(MANIFEST_FILE);
    std::fs::remove_file(&manifest).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
    let evidence = bundle.join(EVIDENCE_FILE);
    std::fs::remove_file(&evidence).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&evidence).status();
    assert!(made.unwrap().success());
    let verification = verify_plain(&bundle);
    let refused: Vec<String> =
        verification.failures.iter().filter(|f| f.code() == "unparsable").map(|f| f.place().file.clone()).collect();
    assert!(
        refused.contains(&MANIFEST_FILE.to_string()) && refused.contains(&EVIDENCE_FILE.to_string()),
        "{refused:?}"
    );
}

#[test]
fn a_subject_naming_a_path_outside_the_bundle_is_never_read() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let path = bundle.join(STATEMENT_FILE);
    let mut statement: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    statement["subject"][0]["name"] = Value::from("../outside");
    std::fs::write(&path, serde_json::to_vec(&statement).unwrap()).unwrap();
    let verification = verify_plain(&bundle);
    let place = verification.failures.iter().find(|f| f.place().file == "../outside");
    assert!(place.is_some_and(|f| f.code() == "unparsable"), "{:?}", verification.failures);
}

#[test]
fn a_reason_code_coverage_edited_to_hide_a_code_is_named() {
    let dir = scratch();
    let bundle = copy_of_bundle(dir.path());
    let mut manifest = read_manifest(&bundle);
    let entries = manifest["reasonCodes"].as_array_mut().unwrap();
    let index = entries.iter().position(|e| e["code"] == "grant_exhausted").unwrap();
    let entry = entries[index].as_object_mut().unwrap();
    entry.remove("rows");
    entry.remove("columns");
    entry.insert("unreachable".into(), Value::from("no seat can exhaust a grant"));
    write_manifest(&bundle, &manifest);
    reseal(&bundle);
    let verification = verify_plain(&bundle);
    let summaries: Vec<String> = verification
        .failures
        .iter()
        .filter(|f| f.code() == "summary_mismatch")
        .map(|f| format!("{} | {f}", f.place()))
        .collect();
    assert_eq!(summaries.len(), 1, "{:?}", verification.failures);
    assert!(summaries[0].starts_with(&format!("manifest.json /reasonCodes/{index} | ")), "{summaries:?}");
    assert!(
        summaries[0]
            .contains("`grant_exhausted` declared unreachable, expected `grant_exhausted` in rows 2 and columns 2"),
        "{summaries:?}"
    );
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn one_byte_changed_in_any_file_does_not_verify() {
        let files = list_files(crate::support::bundle()).unwrap();
        let (suite, own): (Vec<&String>, Vec<&String>) = files.iter().partition(|f| f.starts_with("suite/"));
        // Every file of the bundle's own, and every seventh file of the suite.
        let chosen: Vec<&String> = own.into_iter().chain(suite.into_iter().step_by(7)).collect();
        assert!(chosen.len() >= 20, "{} files tried", chosen.len());
        for name in chosen {
            let dir = scratch();
            let bundle = copy_of_bundle(dir.path());
            let path = bundle.join(name);
            let mut bytes = std::fs::read(&path).unwrap();
            // A hex digit of the statement keeps it readable; anywhere else,
            // the middle byte.
            let at = if name == STATEMENT_FILE {
                bytes.windows(7).position(|w| w == b"sha256\"").unwrap() + 11
            } else {
                bytes.len() / 2
            };
            bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
            std::fs::write(&path, bytes).unwrap();
            let verification = verify_plain(&bundle);
            assert!(!verification.verified(), "{name} changed and still verifies");
            let named = verification.failures.iter().any(|f| f.place().file == *name);
            assert!(named || name == STATEMENT_FILE, "{name}: {:?}", verification.failures);
        }
    }
}
