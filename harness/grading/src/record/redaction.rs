//! A record must never carry what a turn handled: tool arguments, message
//! payloads, file contents, or grading material. This walks the serialised
//! record and names every key that suggests otherwise.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sharedos_model::canonical::CanonicalError;
use sharedos_model::record::ExecutionRecord;

/// Keys that must not appear anywhere in a record.
pub const FORBIDDEN_KEYS: &[&str] = &["arguments", "payload", "content", "goldFacts", "verdict"];

/// The one subtree exempt from the check: the runtime's own answer.
const EXEMPT_PATH: &str = "execution.output";

/// One forbidden key found in a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RedactionFinding {
    /// Dotted path of the offending key (`execution.events.3.data.payload`).
    pub path: String,
    /// The key itself.
    pub key: String,
}

/// Every forbidden key in the record, in document order; empty when clean.
///
/// # Errors
/// When the record cannot be serialised as JSON.
pub fn check_redaction(record: &ExecutionRecord) -> Result<Vec<RedactionFinding>, CanonicalError> {
    let value = serde_json::to_value(record).map_err(|e| CanonicalError(e.to_string()))?;
    let mut findings = Vec::new();
    walk(&value, "", &mut findings);
    Ok(findings)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(value: &Value, path: &str, findings: &mut Vec<RedactionFinding>) {
    if path == EXEMPT_PATH {
        return;
    }
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let at = join(path, key);
                if FORBIDDEN_KEYS.contains(&key.as_str()) && at != EXEMPT_PATH {
                    findings.push(RedactionFinding { path: at.clone(), key: key.clone() });
                }
                walk(child, &at, findings);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, &join(path, &i.to_string()), findings);
            }
        }
        _ => {}
    }
}
