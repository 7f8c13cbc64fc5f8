//! Every committed file of a kind with a schema follows it: the reports,
//! every case, adversary script and seat file.

use super::{assert_valid, read_json, root};
use std::path::{Path, PathBuf};

/// The `*.json` files below `dir` (not the schemas), sorted; `node_modules`
/// is an installed CLI's, not ours.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() && name != "node_modules" {
                pending.push(path);
            } else if name.ends_with(".json") && !name.ends_with(".schema.json") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn all_follow(schema: &str, files: &[PathBuf], at_least: usize) {
    assert!(files.len() >= at_least, "{schema}: only {} files", files.len());
    for file in files {
        assert_valid(schema, &read_json(file), &file.display().to_string());
    }
}

#[test]
fn the_committed_reports_follow_the_manifest_schema() {
    let reports = ["reports/conformance.json", "reports/vendors.json"].map(|f| root().join(f));
    all_follow("manifest.schema.json", &reports, 2);
}

#[test]
fn every_committed_case_follows_the_case_schema() {
    all_follow("case.schema.json", &json_files(&root().join("cases")), 100);
}

#[test]
fn every_committed_adversary_script_follows_the_adversary_schema() {
    all_follow("adversary.schema.json", &json_files(&root().join("adversaries")), 100);
}

#[test]
fn every_committed_seat_file_follows_the_seat_schema() {
    all_follow("seat.schema.json", &json_files(&root().join("harness/seats")), 9);
}
