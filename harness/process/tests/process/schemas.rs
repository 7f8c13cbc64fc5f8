//! The committed JSON Schemas name exactly the messages the harness reads
//! and writes.

use serde_json::Value;
use sharedos_process::message::RUNTIME_TYPES;

fn schema(name: &str) -> Value {
    let path = format!("{}/schemas/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn types(schema: &Value) -> Vec<String> {
    schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["properties"]["type"]["const"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_runtime_message_schema_lists_every_type_a_runtime_may_write() {
    assert_eq!(types(&schema("runtime-message.schema.json")), RUNTIME_TYPES);
}

#[test]
fn the_harness_message_schema_lists_every_type_the_harness_writes() {
    let expected = ["hello", "turn", "toolResult", "ack", "hostError", "draining", "abort", "time", "closed"];
    assert_eq!(types(&schema("harness-message.schema.json")), expected);
}

#[test]
fn every_variant_is_strict() {
    for name in ["runtime-message.schema.json", "harness-message.schema.json"] {
        for variant in schema(name)["oneOf"].as_array().unwrap() {
            assert_eq!(
                variant["additionalProperties"],
                Value::Bool(false),
                "{name}: {}",
                variant["properties"]["type"]
            );
        }
    }
}
