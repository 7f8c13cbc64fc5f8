//! A turn request whose tool list describes a tool differently from the
//! kernel's own definition, so a row can show that the kernel's definition
//! (never the request's) decides what a call may have changed.

use serde::{Deserialize, Serialize};
use sharedos_model::tool::{ReadWrite, ToolAnnotations, ToolDefinition};

/// How the request describes one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestClassification {
    /// The tool.
    pub tool: String,
    /// The classification the request claims.
    pub read_write: ReadWrite,
    /// Whether the request claims the tool is idempotent.
    #[serde(default, skip_serializing_if = "is_false")]
    pub idempotent: bool,
}

// serde's `skip_serializing_if` hands the field by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(flag: &bool) -> bool {
    !*flag
}

/// Rewrites the request's definitions the list names; a definition stays
/// schema-valid (a read is marked read-only, a write never is).
pub fn apply(list: &[RequestClassification], tools: &mut [ToolDefinition]) {
    for entry in list {
        for tool in tools.iter_mut().filter(|t| t.name == entry.tool) {
            tool.read_write = entry.read_write;
            let annotations = ToolAnnotations {
                read_only: Some(entry.read_write == ReadWrite::Read),
                destructive: None,
                idempotent: entry.idempotent.then_some(true),
            };
            tool.annotations = Some(annotations);
        }
    }
}
