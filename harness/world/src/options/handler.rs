//! File tools whose handlers throw when they run, so a row can show that a
//! throwing handler fails its call `tool_execution_failed` (K44) and the
//! turn goes on.

use crate::file_store::FileAction;
use crate::file_tools::tool_name;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use sharedos_kernel::ports::{HandlerError, ParsedCall, Resolution, ToolHandler};
use sharedos_model::access::AccessContext;
use sharedos_model::tool::{ToolDefinition, ToolResult};
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;
use std::sync::Arc;

/// What a throwing handler throws (host-only text, never shown to a runtime).
pub const HANDLER_THROWS: &str = "the tool's backend is unavailable";

/// Whether `name` is a file tool, the tools this option can break.
#[must_use]
pub fn is_file_tool(name: &str) -> bool {
    FileAction::ALL.iter().any(|action| tool_name(*action) == name)
}

/// A handler that parses and resolves as the tool it wraps, then throws.
struct ThrowingHandler {
    inner: Rc<dyn ToolHandler>,
}

impl ToolHandler for ThrowingHandler {
    fn definition(&self) -> &Arc<ToolDefinition> {
        self.inner.definition()
    }

    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        self.inner.parse_arguments(arguments)
    }

    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        self.inner.resolve_requirement(context, call)
    }

    fn invoke<'a>(
        &'a self,
        _context: &'a AccessContext,
        _call: &'a ParsedCall,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>> {
        Box::pin(async { Err(HandlerError::Failed(HANDLER_THROWS.to_string())) })
    }
}

/// Replaces the handler of every tool `names` lists with one that throws.
pub fn apply(names: &[String], registered: &mut [Rc<dyn ToolHandler>]) {
    for handler in registered.iter_mut() {
        if names.iter().any(|name| *name == handler.definition().name) {
            *handler = Rc::new(ThrowingHandler { inner: Rc::clone(handler) });
        }
    }
}
