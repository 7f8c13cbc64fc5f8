//! Shared test fixtures: the testkit's reference-kernel world with two slow
//! tools, a scripted driver for loop tests, and a trivial protocol and batch
//! transport for eval-driver tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod harness;
pub mod script;

use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_envelope::options::ExecuteOptions;
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_kernel::ports::{HandlerError, ParsedCall, Resolution, ToolHandler};
use sharedos_model::access::AccessContext;
use sharedos_model::execution::{ExecutionOptions, ExecutionRequest, ExecutionResult, ExecutionStatus};
use sharedos_model::tool::{ToolDefinition, ToolResult};
use sharedos_port::signal::AbortSignal;
use sharedos_testkit::json::object;
use sharedos_world::constants::{segments, DRAFT_FILE};
use sharedos_world::file_store::FileAction;
use sharedos_world::file_tools::{definition, FileTool};
use sharedos_world::fixtures::WorldFixtures;
use sharedos_world::options::{EscalationMode, WorldOptions};
use std::ops::Deref;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// A read that takes `SLOW_MS` of virtual time.
pub const SLOW_READ: &str = "files.slow_read";
/// A non-idempotent append that takes `SLOW_MS` of virtual time.
pub const SLOW_APPEND: &str = "files.slow_append";
/// How long the slow tools take.
pub const SLOW_MS: u64 = 3000;

/// A shipped file tool that takes its time, under another name.
struct SlowTool {
    inner: FileTool,
    definition: Arc<ToolDefinition>,
}

impl ToolHandler for SlowTool {
    fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        self.inner.parse_arguments(arguments)
    }

    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        self.inner.resolve_requirement(context, call)
    }

    fn invoke<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ParsedCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>> {
        Box::pin(async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(SLOW_MS)) => {}
                () = signal.aborted() => return Err(HandlerError::Aborted),
            }
            self.inner.invoke(context, call, signal).await
        })
    }
}

fn slow(name: &str, action: FileAction, fixtures: &WorldFixtures) -> Rc<dyn ToolHandler> {
    let mut definition = definition(action);
    definition.name = name.to_string();
    Rc::new(SlowTool { inner: FileTool::new(action, Rc::clone(&fixtures.files)), definition: Arc::new(definition) })
}

/// The conformance world of `sharedos_testkit`, with the two slow tools
/// registered beside the world's own.
pub struct World(sharedos_testkit::world::World);

impl Deref for World {
    type Target = sharedos_testkit::world::World;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl World {
    /// The baseline world: every working grant, escalation granted.
    pub fn baseline() -> World {
        World::build(&WorldOptions::default())
    }

    /// A world whose escalation grant is withheld.
    pub fn without_escalation() -> World {
        World::build(&WorldOptions { escalation: Some(EscalationMode::Withheld), ..WorldOptions::default() })
    }

    /// The world `options` describe.
    pub fn build(options: &WorldOptions) -> World {
        World(sharedos_testkit::world::World::build(options, |fixtures| {
            vec![slow(SLOW_READ, FileAction::Read, fixtures), slow(SLOW_APPEND, FileAction::Append, fixtures)]
        }))
    }

    /// A turn request with the given step and tool-call budgets.
    pub fn request(&self, max_steps: Option<u32>, max_tool_calls: Option<u32>) -> ExecutionRequest {
        let limits = ExecutionOptions { max_steps, max_tool_calls, timeout_ms: None };
        self.0.request((limits != ExecutionOptions::default()).then_some(limits))
    }

    /// Runs one turn of `runtime` with default limits.
    pub async fn run(&self, runtime: Rc<dyn RuntimePlugin>) -> ExecutionResult {
        self.run_with(runtime, self.request(None, None), 0).await
    }

    /// Runs one turn of `runtime` on `request` with a drain grace.
    pub async fn run_with(
        &self,
        runtime: Rc<dyn RuntimePlugin>,
        request: ExecutionRequest,
        grace_ms: u64,
    ) -> ExecutionResult {
        let executor = self.executor(runtime, grace_ms);
        executor.execute(request, ExecuteOptions::default()).await.unwrap()
    }

    /// How many `escalation.requested` records the audit log holds.
    pub fn escalations_recorded(&self) -> usize {
        self.fixtures.audit.of_kind(sharedos_model::audit::AuditType::EscalationRequested).len()
    }
}

/// Arguments appending to the draft.
pub fn append_draft() -> Map<String, Value> {
    object(json!({"path": segments(&DRAFT_FILE), "content": " more"}))
}

/// `(status, code, retryable)` of a result.
pub fn ending(result: &ExecutionResult) -> (ExecutionStatus, Option<String>, Option<bool>) {
    (result.status, result.error.as_ref().map(|e| e.code.clone()), result.error.as_ref().and_then(|e| e.retryable))
}

/// A metadata value of a result.
pub fn meta(result: &ExecutionResult, key: &str) -> Option<Value> {
    result.metadata.as_ref().and_then(|m| m.get(key)).cloned()
}
