//! Tool calls as a runtime asks for them.

use crate::json::object;
use serde_json::Value;
use sharedos_model::tool::ToolCall;
use sharedos_world::constants::NOW;

/// The trace id every [`call`] carries; a test context that is to accept
/// the call carries it too.
pub const TRACE: &str = "trace-1";

/// A call `id` of `tool` with the object `arguments`, on [`TRACE`],
/// requested at the world's `NOW`.
#[must_use]
pub fn call(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: tool.into(),
        arguments: object(arguments),
        trace_id: TRACE.into(),
        requested_at: NOW.into(),
    }
}
