//! The events an execution result reports.

use serde_json::Value;
use sharedos_model::execution::ExecutionResult;

/// The event types of `result`, in order.
#[must_use]
pub fn kinds(result: &ExecutionResult) -> Vec<String> {
    result.events.iter().map(|event| event.kind.clone()).collect()
}

/// The data of every event of `kind`, in order.
#[must_use]
pub fn events_of(result: &ExecutionResult, kind: &str) -> Vec<Value> {
    result.events.iter().filter(|event| event.kind == kind).map(|event| event.data.clone()).collect()
}
