//! The committed JSON Schemas describe what the harness writes and reads:
//! the committed manifest, a bundle's manifest and statement, and a
//! baseline file validate; a broken one of each does not.

use crate::support::{bundle, suite_root};
use serde_json::Value;
use std::path::Path;

fn validator(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../metadata/schemas").join(name);
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_committed_manifest_and_a_bundles_validate_and_a_bad_status_does_not() {
    let schema = validator("manifest.schema.json");
    let committed = json(&suite_root().join("reports/conformance.json"));
    let errors: Vec<String> = schema.iter_errors(&committed).map(|e| e.to_string()).collect();
    assert_eq!(errors, Vec::<String>::new());
    assert!(schema.is_valid(&json(&bundle().join("manifest.json"))));
    let mut broken = committed;
    broken["rows"][0]["cells"][0]["status"] = Value::from("great");
    assert!(!schema.is_valid(&broken));
}

#[test]
fn a_bundles_statement_validates_and_a_short_digest_does_not() {
    let schema = validator("statement.schema.json");
    let statement = json(&bundle().join("statement.json"));
    let errors: Vec<String> = schema.iter_errors(&statement).map(|e| e.to_string()).collect();
    assert_eq!(errors, Vec::<String>::new());
    let mut broken = statement;
    broken["subject"][0]["digest"]["sha256"] = Value::from("abc");
    assert!(!schema.is_valid(&broken));
}

#[test]
fn a_baseline_validates_and_one_without_a_reason_does_not() {
    let schema = validator("baseline.schema.json");
    let text = "version = 1\n\n[[known-failure]]\ncase = \"a\"\ncondition = \"b\"\ncolumn = \"c\"\nreason = \"d\"\n";
    let baseline: Value = toml::from_str(text).unwrap();
    assert!(schema.is_valid(&baseline), "{baseline}");
    let broken: Value = toml::from_str(&text.replace("reason = \"d\"\n", "")).unwrap();
    assert!(!schema.is_valid(&broken));
}

#[test]
fn a_repeated_sharded_bundles_manifest_and_statement_validate() {
    let dir = crate::support::scratch();
    let part = dir.path().join("part");
    let shard = sharedos_grading::plan::shard::Shard { index: 1, count: 4 };
    crate::support::certify_runs(&part, "process:python-reference", Some(shard), 2);
    let manifest = json(&part.join("manifest.json"));
    assert!(manifest["rows"][0]["cells"][1]["repeats"].is_object(), "a repeated cell");
    let errors: Vec<String> = validator("manifest.schema.json").iter_errors(&manifest).map(|e| e.to_string()).collect();
    assert_eq!(errors, Vec::<String>::new());
    let statement = json(&part.join("statement.json"));
    assert_eq!(
        (statement["predicate"]["repeat"].clone(), statement["predicate"]["shard"]["count"].clone()),
        (2.into(), 4.into())
    );
    let errors: Vec<String> =
        validator("statement.schema.json").iter_errors(&statement).map(|e| e.to_string()).collect();
    assert_eq!(errors, Vec::<String>::new());
}
