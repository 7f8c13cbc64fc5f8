//! The identity hashes a record carries (`experiment.*Hash`,
//! `system.policyHash`) and the record hash the evidence root is built from.

use crate::case::Case;
use crate::judge::RULES_VERSION;
use crate::script::AttackScript;
use serde_json::{json, Value};
use sharedos_model::canonical::{tagged_hash, CanonicalError};
use sharedos_model::record::ExecutionRecord;
use sharedos_model::tool::ToolDefinition;

/// The question a cell asks: its case, its whole script (prose included, so
/// a reworded attempt is a different experiment for this hash) and condition.
///
/// # Errors
/// When the value has no canonical form (it always has).
pub fn spec_hash(case: &Case, script: &AttackScript, condition_id: &str) -> Result<String, CanonicalError> {
    tagged_hash("sharedos-conformance/spec/v1", &json!({ "case": case.id, "move": script, "condition": condition_id }))
}

/// A materialised world, as [`crate::world::World::description`] states it.
///
/// # Errors
/// As [`spec_hash`].
pub fn world_hash(description: &Value) -> Result<String, CanonicalError> {
    tagged_hash("sharedos-conformance/world/v1", description)
}

/// The grading rules that judged the record.
///
/// # Errors
/// As [`spec_hash`].
pub fn evaluator_hash() -> Result<String, CanonicalError> {
    tagged_hash(
        "sharedos-conformance/evaluator/v1",
        &json!({ "judge": "sharedos-conformance", "version": RULES_VERSION }),
    )
}

/// The tool policy a turn ran under: enabled namespaces and the tools requested.
///
/// # Errors
/// As [`spec_hash`].
pub fn policy_hash(enabled: &[String], tools: &[ToolDefinition]) -> Result<String, CanonicalError> {
    tagged_hash("sharedos-conformance/policy/v1", &json!({ "enabledToolNamespaces": enabled, "tools": tools }))
}

/// A record's content hash.
///
/// # Errors
/// As [`spec_hash`].
pub fn record_hash(record: &ExecutionRecord) -> Result<String, CanonicalError> {
    tagged_hash("sharedos-conformance/record/v1", record)
}
