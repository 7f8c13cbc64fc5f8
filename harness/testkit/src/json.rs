//! JSON objects written as `json!` literals.

use serde_json::{Map, Value};

/// `value` as the object it is; a test input that is not one is a bug in the
/// test, so this panics naming it.
#[must_use]
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}
