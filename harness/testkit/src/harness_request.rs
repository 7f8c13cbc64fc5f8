//! The turn request a harness transport opens with.

use serde_json::json;
use sharedos_drivers::frame::HarnessTurnRequest;
use sharedos_model::access::{Reach, RuntimeVisibleContext};
use sharedos_model::address::Address;

/// A turn request for transport tests: turn `execution_id` asking `prompt`,
/// with no tools and a seat that reaches nothing.
#[must_use]
pub fn harness_request(execution_id: &str, prompt: &str) -> HarnessTurnRequest {
    HarnessTurnRequest {
        execution_id: execution_id.to_string(),
        prompt: prompt.to_string(),
        instructions: None,
        tools: json!([]).into(),
        context: RuntimeVisibleContext {
            actor: Address::agent("seat"),
            owner: Address::human("owner"),
            namespace_id: "ns".to_string(),
            purpose: "test".to_string(),
            trace_id: "trace".to_string(),
            now: "2026-01-01T00:00:00.000Z".to_string(),
            reach: Reach::Computed { reach: Vec::new() },
        },
        metadata: None,
    }
}
