//! Each schema rejects its committed invalid fixtures
//! (`harness/metadata/tests/fixtures/invalid/`), each at the place the
//! fixture names and nowhere else, so a fixture broken by accident proves
//! nothing. Every schema has at least one.

use super::{read_json, root, schemas, validator};
use std::collections::BTreeSet;

#[test]
fn every_schema_rejects_its_invalid_fixtures_where_each_says() {
    let folder = root().join("harness/metadata/tests/fixtures/invalid");
    let mut paths: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut covered = BTreeSet::new();
    let mut wrong = Vec::new();
    for path in &paths {
        let fixture = read_json(path);
        let (schema, at) = (fixture["schema"].as_str().unwrap(), fixture["at"].as_str().unwrap());
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(name.starts_with(schema.trim_end_matches("schema.json")), "{name} is named after its schema {schema}");
        let places: Vec<String> =
            validator(schema).iter_errors(&fixture["document"]).map(|e| e.instance_path.to_string()).collect();
        if !places.iter().any(|p| p == at) || !places.iter().all(|p| p.starts_with(at)) {
            wrong.push(format!("{name}: expected an error at {at:?} and none elsewhere, got {places:?}"));
        }
        covered.insert(schema.to_string());
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let every: BTreeSet<String> = schemas().keys().cloned().collect();
    let bare: Vec<&String> = every.difference(&covered).collect();
    assert!(bare.is_empty(), "schemas with no invalid fixture: {bare:?}");
}
