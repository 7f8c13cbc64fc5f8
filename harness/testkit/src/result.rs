//! Tool results as a kernel answers a call.

use sharedos_model::tool::{ToolOutcome, ToolResult};
use sharedos_world::constants::NOW;

/// The result of call `call_id` to `tool` with `outcome`, completed at the
/// world's `NOW`.
#[must_use]
pub fn result(call_id: &str, tool: &str, outcome: ToolOutcome) -> ToolResult {
    ToolResult { call_id: call_id.into(), tool: tool.into(), completed_at: NOW.into(), metadata: None, outcome }
}
