//! The contract every vendor codec keeps, written once: the writer states the
//! reader's protocol id and writes frames that read back as every step kind
//! (D38), the catalogue is listed in the vendor's tool shape (D39), and a tool
//! result travels back as its status body in the vendor's result frame (the
//! rule that states each vendor's frame: D32, D33, D36, D37).
//!
//! What differs between codecs is data: each codec's test file states its
//! [`Codec`], and [`codec_contract_tests!`] instantiates the contract's tests
//! for it at the end of this file. The property tests in those files keep
//! their vendor-tuned strategies and call the property checks here.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Map, Value};
use sharedos_drivers::frame::{HarnessFrame, HarnessStep};
use sharedos_drivers::live::{LiveOutcome, StreamReading};
use sharedos_drivers::protocol::{HarnessFrameWriter, HarnessProtocol};
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_model::tool::{ProtocolError, ReadWrite, ToolDefinition, ToolOutcome};
use sharedos_testkit::json::object;
use sharedos_testkit::result::result;
use std::sync::Arc;

/// One codec as the contract sees it: its reader, its writer, and the
/// vendor's facts the contract checks them against.
pub(crate) struct Codec {
    /// The codec's reader.
    pub(crate) protocol: &'static dyn HarnessProtocol,
    /// The codec's writer.
    pub(crate) writer: &'static dyn HarnessFrameWriter,
    /// The vendor that pairs them.
    pub(crate) vendor: Vendor,
    /// The protocol id both state (D38).
    pub(crate) protocol_id: &'static str,
    /// The step a completion written with this output reads back as (D38):
    /// some vendors carry the output as text, others drop it.
    pub(crate) completion: fn(&Value) -> HarnessStep,
    /// Checks the vendor's shape of the frames the writer writes (D38).
    pub(crate) written_frames: fn(),
    /// The catalogue entry of `files.read`, "Reads a file.", whose input
    /// schema is this one (D39).
    pub(crate) described_tool: fn(&Value) -> Value,
    /// Whether the catalogue reaches the CLI outside its wire (D39).
    pub(crate) catalogue_out_of_band: bool,
    /// The frame handing back the result of a call id and tool whose body is
    /// this text; the flag says the call did not succeed.
    pub(crate) result_frame: fn(&str, &str, &str, bool) -> Value,
}

// ---------------------------------------------------------------- D38

fn the_writer_states_the_protocol_id_and_the_vendor_pairs_them(codec: &Codec) {
    assert_eq!(codec.writer.protocol_id(), codec.protocol_id);
    assert_eq!(codec.protocol.id(), codec.writer.protocol_id());
    assert_eq!(codec.vendor.protocol().id(), codec.vendor.writer().protocol_id());
    assert_eq!(codec.vendor.protocol().id(), codec.protocol_id);
}

fn every_step_kind_round_trips_through_the_reader(codec: &Codec) {
    let (protocol, writer) = (codec.protocol, codec.writer);
    let arguments = [
        object(json!({"path": ["Work", "Public"], "n": 1.5, "deep": {"x": [null, true]}})),
        object(json!({"path": ["Work", "Public"]})),
        object(json!({"path": ["Work"]})),
    ];
    for call_id in ["call_9", "toolu_9", "exec.call.1"] {
        for arguments in &arguments {
            assert_eq!(
                protocol.interpret(&writer.tool_call(call_id, "files.read", arguments)),
                vec![HarnessStep::ToolCall {
                    call_id: call_id.into(),
                    tool: "files.read".into(),
                    arguments: arguments.clone()
                }],
                "{call_id} {arguments:?}"
            );
        }
    }
    for text in ["Reading.", "Done."] {
        assert_eq!(protocol.interpret(&writer.message(text)), vec![HarnessStep::Message { text: text.into() }]);
    }
    assert_eq!(protocol.interpret(&writer.complete(None)), vec![HarnessStep::bare_complete()]);
    for output in [json!({"transcript": "exec_1"}), json!({"transcript": "exec-1"})] {
        assert_eq!(protocol.interpret(&writer.complete(Some(&output))), vec![(codec.completion)(&output)], "{output}");
    }
    for message in ["The seat failed.", "Stopped: the model is unavailable."] {
        let steps = protocol.interpret(&writer.failure(message));
        assert_eq!(steps.len(), 1, "{message}: {steps:?}");
        let HarnessStep::Failed { error } = &steps[0] else { panic!("{message}: not a failure: {steps:?}") };
        assert_eq!(error.message, message);
        assert!(!error.code.is_empty(), "{message}: a failure without a code");
    }
    (codec.written_frames)();
}

/// A written call reads back as that call (D38).
pub(crate) fn call_round_trips(
    codec: &Codec,
    call_id: String,
    tool: String,
    arguments: Map<String, Value>,
) -> Result<(), TestCaseError> {
    let written = codec.writer.tool_call(&call_id, &tool, &arguments);
    prop_assert_eq!(codec.protocol.interpret(&written), vec![HarnessStep::ToolCall { call_id, tool, arguments }]);
    Ok(())
}

/// Written prose reads back as that prose (D38).
pub(crate) fn message_round_trips(codec: &Codec, text: String) -> Result<(), TestCaseError> {
    let written = codec.writer.message(&text);
    prop_assert_eq!(codec.protocol.interpret(&written), vec![HarnessStep::Message { text }]);
    Ok(())
}

/// A written completion reads back as the vendor's completion (D38).
pub(crate) fn completion_round_trips(codec: &Codec, output: &Value) -> Result<(), TestCaseError> {
    let written = codec.writer.complete(Some(output));
    prop_assert_eq!(codec.protocol.interpret(&written), vec![(codec.completion)(output)]);
    Ok(())
}

// ---------------------------------------------------------------- D39

fn tool(input_schema: &Value) -> ToolDefinition {
    ToolDefinition {
        name: "files.read".into(),
        description: "Reads a file.".into(),
        namespace: "files".into(),
        source: "sharedos".into(),
        read_write: ReadWrite::Read,
        input_schema: object(input_schema.clone()).into(),
        output_schema: None,
        required_capability: Requirement {
            resource: ResourceRef { namespace: "files".into(), path: vec!["Work".into()], owner: None },
            action: "read".into(),
        },
        annotations: None,
        metadata: None,
    }
}

fn tools_are_described_in_the_vendor_shape(codec: &Codec) {
    for schema in [json!({"type": "object"}), json!({"type": "object", "properties": {"path": {"type": "array"}}})] {
        assert_eq!(
            codec.protocol.describe_tools(&[Arc::new(tool(&schema))]),
            json!([(codec.described_tool)(&schema)]),
            "{schema}"
        );
    }
    assert_eq!(codec.protocol.describe_tools(&[]), json!([]));
    assert_eq!(codec.vendor.catalogue_out_of_band(), codec.catalogue_out_of_band);
}

// ---------------------------------------------------------------- results

fn errors() -> Vec<ProtocolError> {
    let mut undisclosed = ProtocolError::new("no_matching_grant", "No grant covers it.");
    undisclosed.retryable = Some(true);
    undisclosed.details = Some(object(json!({"secret": 1})));
    let mut retryable = ProtocolError::new("tool_unavailable", "Not here.");
    retryable.retryable = Some(true);
    vec![undisclosed, retryable, ProtocolError::new("tool_execution_failed", "The disk is gone.")]
}

/// Every result is the vendor's frame around the exact text of its status
/// body; `retryable` and `details` are never disclosed.
fn a_result_is_the_status_body_in_the_vendor_frame(codec: &Codec) {
    let frame = |outcome: ToolOutcome, body: Value, is_error: bool| {
        let encoded = codec.protocol.encode_tool_result(&result("call_01", "files.read", outcome));
        let expected = (codec.result_frame)("call_01", "files.read", &body.to_string(), is_error);
        assert_eq!(Value::Object(encoded), expected, "{body}");
    };
    for output in [json!({"n": 1}), json!("alpha"), json!({"content": "x"}), json!([1])] {
        let body = json!({"status": "succeeded", "output": output});
        frame(ToolOutcome::Succeeded { output }, body, false);
    }
    for error in errors() {
        let disclosed = json!({"code": error.code, "message": error.message});
        frame(ToolOutcome::Denied { error: error.clone() }, json!({"status": "denied", "error": disclosed}), true);
        frame(ToolOutcome::Failed { error }, json!({"status": "failed", "error": disclosed}), true);
    }
}

// ---------------------------------------------------------------- properties

/// No step `interpret` gives fails coded `success` or without a message.
pub(crate) fn interpret_never_fails_with_success(codec: &Codec, frame: &HarnessFrame) -> Result<(), TestCaseError> {
    for step in codec.protocol.interpret(frame) {
        if let HarnessStep::Failed { error } = step {
            prop_assert_ne!(error.code.as_str(), "success");
            prop_assert!(!error.message.trim().is_empty());
        }
    }
    Ok(())
}

/// A failed reading is never coded `success` and always says something.
pub(crate) fn reading_never_fails_with_success(reading: &StreamReading) -> Result<(), TestCaseError> {
    if let LiveOutcome::Failed { code, message, .. } = &reading.outcome {
        prop_assert_ne!(code.as_str(), "success");
        prop_assert!(!message.trim().is_empty());
    }
    Ok(())
}

/// A stream of arbitrary bytes, then each frame and each value on a line.
pub(crate) fn arbitrary_lines(bytes: &[u8], frames: &[HarnessFrame], values: &[Value]) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    for frame in frames {
        text.push('\n');
        text.push_str(&Value::Object(frame.clone()).to_string());
    }
    for value in values {
        text.push('\n');
        text.push_str(&value.to_string());
    }
    text
}

// ---------------------------------------------------------------- the four codecs

/// The contract's tests for one codec, in a module named after it; the
/// result-frame test takes its name from the rule that states the vendor's
/// result frame.
macro_rules! codec_contract_tests {
    ($module:ident, $codec:expr, results: $results:ident) => {
        mod $module {
            #[test]
            fn d38_the_writer_states_the_protocol_id_and_the_vendor_pairs_them() {
                super::the_writer_states_the_protocol_id_and_the_vendor_pairs_them(&$codec);
            }

            #[test]
            fn d38_every_step_kind_round_trips_through_the_reader() {
                super::every_step_kind_round_trips_through_the_reader(&$codec);
            }

            #[test]
            fn d39_tools_are_described_in_the_vendor_shape() {
                super::tools_are_described_in_the_vendor_shape(&$codec);
            }

            #[test]
            fn $results() {
                super::a_result_is_the_status_body_in_the_vendor_frame(&$codec);
            }
        }
    };
}

codec_contract_tests!(codex, crate::codec_codex::CODEC, results: d32_a_result_is_a_function_call_output_with_the_body_text);
codec_contract_tests!(claude_code, crate::codec_claude_code::CODEC,
    results: d33_a_result_is_a_user_tool_result_whose_is_error_means_not_succeeded);
codec_contract_tests!(deepseek, crate::codec_deepseek::CODEC, results: d36_a_result_is_a_session_prompt_notification);
codec_contract_tests!(pi, crate::codec_pi::CODEC, results: d37_a_result_is_a_tool_result_message);
