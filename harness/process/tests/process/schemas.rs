//! The committed JSON Schemas name exactly the messages the harness reads
//! and writes.

use serde_json::Value;
use sharedos_process::message::RUNTIME_TYPES;

fn schema(name: &str) -> Value {
    let path = format!("{}/../metadata/schemas/{name}", env!("CARGO_MANIFEST_DIR"));
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
    let expected = ["hello", "turn", "toolResult", "ack", "hostError", "draining", "abort", "time", "closed", "fence"];
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

/// The fenced blocks of `PROTOCOL.md` tagged `json harness` or `json runtime`.
fn document_examples() -> Vec<(String, String)> {
    let path = format!("{}/PROTOCOL.md", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut examples = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) if info.starts_with("json ") => {
                open = Some((info["json ".len()..].trim().to_string(), String::new()));
            }
            (Some(_), Some("")) => examples.extend(open.take()),
            (Some((_, body)), None) => body.push_str(line),
            _ => {}
        }
    }
    examples
}

/// Every message the document shows is valid under its direction's schema,
/// and a runtime's is read by the harness as the message it names.
#[test]
fn every_example_in_the_document_follows_its_schema_and_parses() {
    use sharedos_process::violation::parse_line;
    let validator = |name: &str| jsonschema::validator_for(&schema(name)).unwrap();
    let (harness, runtime) = (validator("harness-message.schema.json"), validator("runtime-message.schema.json"));
    let (mut written, mut read) = (Vec::new(), Vec::new());
    for (direction, body) in document_examples() {
        let message: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{body}: {e}"));
        let kind = message["type"].as_str().unwrap().to_string();
        match direction.as_str() {
            "harness" => {
                assert!(harness.is_valid(&message), "{body}: {:?}", harness.validate(&message).err());
                written.push(kind);
            }
            "runtime" => {
                assert!(runtime.is_valid(&message), "{body}: {:?}", runtime.validate(&message).err());
                let parsed = parse_line(body.as_bytes()).unwrap_or_else(|v| panic!("{body}: {v}"));
                assert_eq!(parsed.kind(), kind);
                read.push(kind);
            }
            other => panic!("an example tagged `json {other}`"),
        }
    }
    written.sort();
    read.sort();
    let mut all_written = types(&schema("harness-message.schema.json"));
    let mut all_read = types(&schema("runtime-message.schema.json"));
    all_written.sort();
    all_read.sort();
    assert_eq!(written, all_written, "one example per message the harness writes");
    assert_eq!(read, all_read, "one example per message a runtime writes");
}

/// The document's table of violations lists exactly the codes the harness gives.
#[test]
fn the_document_lists_every_violation_code() {
    use sharedos_process::violation::Violation;
    let path = format!("{}/PROTOCOL.md", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let listed: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("| `runtime_"))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    let expected: Vec<String> = Violation::CODES.iter().map(|c| c.trim_start_matches("runtime_").to_string()).collect();
    assert_eq!(listed, expected);
}
