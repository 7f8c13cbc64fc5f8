//! The grant-material inspection: walk every surface a runtime is handed
//! and report any name that would be authority.

use serde_json::Value;
use sharedos_grading::input::script::{AttackScript, Attempt};
use sharedos_grading::record::receipt::AttemptReceipt;
use sharedos_model::execution::RuntimeTurnRequest;
use sharedos_model::tool::ToolStatus;

/// The synthetic code of an inspection that found no grant material.
pub const NO_GRANT_MATERIAL: &str = "no_grant_material_reachable";
/// Names whose presence on a runtime surface would be grant material.
const GRANT_MATERIAL_NAMES: &[&str] = &[
    "grant",
    "grants",
    "grantId",
    "grantSource",
    "parentGrantId",
    "capabilities",
    "delegationDepth",
    "issuer",
    "revokedAt",
];
/// The members of the runtime host, which the inspection walks too.
const HOST_MEMBERS: &[&str] = &["limits", "invokeTool", "emit", "annotate", "draining"];

/// Inspects the turn request and the host's members for grant material.
#[must_use]
pub fn inspect_grant_material(
    script: &AttackScript,
    attempt: &Attempt,
    request: &RuntimeTurnRequest,
) -> AttemptReceipt {
    let mut found = Vec::new();
    let surface = serde_json::to_value(request).unwrap_or(Value::Null);
    find_grant_material(&surface, "request", &mut found);
    for member in HOST_MEMBERS {
        if GRANT_MATERIAL_NAMES.contains(member) {
            found.push(format!("host.{member}"));
        }
    }
    found.sort();
    let mut receipt = AttemptReceipt::unattempted(script, attempt, "");
    receipt.attempted = true;
    if found.is_empty() {
        receipt.observed = Some(ToolStatus::Denied);
        receipt.reason_code = Some(NO_GRANT_MATERIAL.to_string());
        receipt.detail = None;
    } else {
        receipt.observed = Some(ToolStatus::Succeeded);
        receipt.detail = Some(found.join(", ").chars().take(512).collect());
    }
    receipt
}

fn find_grant_material(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let child_path = format!("{path}.{key}");
                if GRANT_MATERIAL_NAMES.contains(&key.as_str()) {
                    found.push(child_path.clone());
                }
                find_grant_material(child, &child_path, found);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_grant_material(child, &format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}
