//! The helpers every codec shares: argument parsing (D29, D35) and the
//! result body every vendor's result frame carries (D32, D33, D36, D37).

use proptest::prelude::*;
use serde_json::{json, Value};
use sharedos_drivers::wire::{parse_tool_arguments, tool_result_body, tool_result_text};
use sharedos_model::tool::{ProtocolError, ToolOutcome};
use sharedos_testkit::result::result;

#[test]
fn the_result_body_drops_retryable_and_details() {
    let mut error = ProtocolError::new("no_matching_grant", "no grant covers this call");
    error.retryable = Some(true);
    let text = tool_result_text(&result("c1", "files.read", ToolOutcome::Denied { error }));
    assert_eq!(
        text,
        r#"{"error":{"code":"no_matching_grant","message":"no grant covers this call"},"status":"denied"}"#
    );
}

#[test]
fn blank_arguments_are_an_empty_object_and_only_objects_parse() {
    assert_eq!(parse_tool_arguments("  "), Some(serde_json::Map::new()));
    assert_eq!(parse_tool_arguments("[1,2]"), None);
    assert_eq!(parse_tool_arguments("null"), None);
    assert_eq!(parse_tool_arguments("{\"a\":1}").map(Value::Object), Some(json!({"a": 1})));
}

proptest! {
    #[test]
    fn the_result_text_is_the_json_text_of_the_result_body(text in ".*", code in "[a-z_]{1,12}", n in any::<i64>()) {
        let succeeded = result("c1", "files.read", ToolOutcome::Succeeded { output: json!({"content": text.clone(), "n": n, "z": [1, {"b": 2, "a": 1}]}) });
        prop_assert_eq!(tool_result_text(&succeeded), tool_result_body(&succeeded).to_string());
        let failed = result("c1", "files.read", ToolOutcome::Failed { error: ProtocolError::new(code, text) });
        prop_assert_eq!(tool_result_text(&failed), tool_result_body(&failed).to_string());
    }
}
