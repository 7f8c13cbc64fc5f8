//! The published JSON Schemas hold for every file the harness writes or
//! commits, each closed vocabulary they restate is the harness's own enum,
//! and each rejects its committed invalid fixtures. `scripts/schema-check.sh`
//! checks the same files with an independent validator.

mod committed;
mod invalid;
mod outputs;
mod vocab;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every schema file, by file name: the published ones and the three that
/// sit beside the files they describe.
pub fn schema_files() -> BTreeMap<String, PathBuf> {
    let mut files = BTreeMap::new();
    let published = root().join("harness/metadata/schemas");
    for entry in std::fs::read_dir(&published).unwrap() {
        let path = entry.unwrap().path();
        files.insert(path.file_name().unwrap().to_string_lossy().into_owned(), path);
    }
    for beside in ["cases/case.schema.json", "adversaries/adversary.schema.json", "harness/seats/seat.schema.json"] {
        let path = root().join(beside);
        files.insert(path.file_name().unwrap().to_string_lossy().into_owned(), path);
    }
    files
}

/// A JSON file.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every schema, parsed, by file name.
pub fn schemas() -> &'static BTreeMap<String, Value> {
    static SCHEMAS: OnceLock<BTreeMap<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| schema_files().into_iter().map(|(name, path)| (name, read_json(&path))).collect())
}

/// The validator of one schema, every other schema reachable by its `$id`
/// (the output schemas refer to the manifest's cell).
pub fn validator(name: &str) -> &'static jsonschema::Validator {
    static VALIDATORS: OnceLock<BTreeMap<String, jsonschema::Validator>> = OnceLock::new();
    let all = VALIDATORS.get_or_init(|| {
        let build = |schema: &Value| {
            let resources = schemas().values().map(|other| {
                let id = other["$id"].as_str().unwrap().to_string();
                (id, jsonschema::Resource::from_contents(other.clone()).unwrap())
            });
            jsonschema::options().with_resources(resources).build(schema).unwrap()
        };
        schemas().iter().map(|(name, schema)| (name.clone(), build(schema))).collect()
    });
    all.get(name).unwrap_or_else(|| panic!("no schema {name}"))
}

/// Each way `value` breaks `schema`, with where.
pub fn errors(schema: &str, value: &Value) -> Vec<String> {
    validator(schema).iter_errors(value).map(|e| format!("at {:?}: {e}", e.instance_path.to_string())).collect()
}

/// Fails, naming `what` and every error, unless `value` follows `schema`.
pub fn assert_valid(schema: &str, value: &Value, what: &str) {
    let errors = errors(schema, value);
    assert!(errors.is_empty(), "{what} does not follow {schema}:\n  {}", errors.join("\n  "));
}

/// Every line of a JSON Lines text, parsed.
pub fn lines(text: &str) -> Vec<Value> {
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}
