//! Shared test fixtures: a reference-kernel world with two slow tools, turn
//! requests and executors over it, a scripted driver for loop tests, and a
//! trivial protocol and batch transport for eval-driver tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod harness;
pub mod script;

use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_envelope::executor::Executor;
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions, SequentialIds};
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_kernel::escalation::escalation_tool;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::{HandlerError, ParsedCall, ToolHandler};
use sharedos_model::access::AccessContext;
use sharedos_model::capability::Requirement;
use sharedos_model::execution::{ExecutionOptions, ExecutionRequest, ExecutionResult, ExecutionStatus};
use sharedos_model::message::{MessageEnvelope, PROTOCOL_VERSION};
use sharedos_model::tool::{ToolDefinition, ToolResult};
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{agent, context, segments, DRAFT_FILE, NOW, POLICY_FILE, PURPOSE, TRACE_ID};
use sharedos_world::file_store::FileAction;
use sharedos_world::file_tools::{definition, FileTool};
use sharedos_world::fixtures::WorldFixtures;
use sharedos_world::options::{EscalationMode, WorldOptions};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// A read that takes `SLOW_MS` of virtual time.
pub const SLOW_READ: &str = "files.slow_read";
/// A non-idempotent append that takes `SLOW_MS` of virtual time.
pub const SLOW_APPEND: &str = "files.slow_append";
/// How long the slow tools take.
pub const SLOW_MS: u64 = 3000;
/// The execution id every test turn uses.
pub const EXECUTION_ID: &str = "drivers-test.turn";

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

    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Requirement, String>> {
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

/// A conformance world: the reference kernel over armed fixtures.
pub struct World {
    /// The kernel.
    pub kernel: Rc<Kernel>,
    /// The stores, audit log and clock.
    pub fixtures: WorldFixtures,
    /// Every tool a request lists.
    pub requested_tools: Vec<ToolDefinition>,
}

impl World {
    /// The baseline world: every working grant, escalation granted.
    pub fn baseline() -> World {
        World::build(&WorldOptions::default())
    }

    /// A world whose escalation grant is withheld.
    pub fn without_escalation() -> World {
        let mut options = WorldOptions::default();
        options.escalation = Some(EscalationMode::Withheld);
        World::build(&options)
    }

    /// The world `options` describe.
    pub fn build(options: &WorldOptions) -> World {
        let fixtures = WorldFixtures::build(options);
        let mut registered = fixtures.static_tools();
        registered.push(escalation_tool());
        registered.push(slow(SLOW_READ, FileAction::Read, &fixtures));
        registered.push(slow(SLOW_APPEND, FileAction::Append, &fixtures));
        let mut builder = Kernel::builder(fixtures.grant_source.clone(), fixtures.audit.clone())
            .usage_store(Rc::clone(&fixtures.usage))
            .delegation_resolver(fixtures.chain.clone())
            .message_transport(fixtures.transport.clone())
            .message_router(fixtures.router.clone());
        for handler in &registered {
            builder = builder.tool(Rc::clone(handler));
        }
        let kernel = builder.build().unwrap();
        let requested_tools = registered.iter().map(|h| ToolDefinition::clone(h.definition())).collect();
        World { kernel: Rc::new(kernel), fixtures, requested_tools }
    }

    /// A turn request with the given step and tool-call budgets.
    pub fn request(&self, max_steps: Option<u32>, max_tool_calls: Option<u32>) -> ExecutionRequest {
        let limits = ExecutionOptions { max_steps, max_tool_calls, timeout_ms: None };
        ExecutionRequest {
            version: PROTOCOL_VERSION.to_string(),
            execution_id: EXECUTION_ID.to_string(),
            agent: agent(),
            context: context(&self.fixtures.clock.now(), TRACE_ID),
            message: MessageEnvelope {
                version: PROTOCOL_VERSION.to_string(),
                id: format!("{EXECUTION_ID}-message"),
                sender: agent(),
                receiver: agent(),
                purpose: PURPOSE.to_string(),
                payload: json!({"text": "Read the policy file."}),
                trace_id: TRACE_ID.to_string(),
                created_at: NOW.to_string(),
                reply_to: None,
                provenance: None,
            },
            tools: self.requested_tools.clone().into(),
            state: None,
            options: (limits != ExecutionOptions::default()).then_some(limits),
            metadata: None,
        }
    }

    /// An executor seating `runtime` over this world, with a drain grace.
    pub fn executor(&self, runtime: Rc<dyn RuntimePlugin>, grace_ms: u64) -> Executor {
        let clock = self.fixtures.clock.clone();
        let options = ExecutorOptions {
            clock: Rc::new(move || clock.now()),
            create_id: Rc::new(SequentialIds::new(&format!("{EXECUTION_ID}.event"))),
            drain_grace_ms: grace_ms,
            ..ExecutorOptions::default()
        };
        Executor::new(self.kernel.clone(), runtime, options).unwrap()
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

    /// `tool.invoked` audit records, as `(tool, outcome)`.
    pub fn invoked(&self) -> Vec<String> {
        self.fixtures
            .audit
            .of_kind(sharedos_model::audit::AuditType::ToolInvoked)
            .iter()
            .map(|event| serde_json::to_value(event).unwrap()["outcome"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// How many `escalation.requested` records the audit log holds.
    pub fn escalations_recorded(&self) -> usize {
        self.fixtures.audit.of_kind(sharedos_model::audit::AuditType::EscalationRequested).len()
    }
}

/// Arguments reading the policy file.
pub fn read_policy() -> Map<String, Value> {
    json!({"path": segments(&POLICY_FILE)}).as_object().cloned().unwrap()
}

/// Arguments appending to the draft.
pub fn append_draft() -> Map<String, Value> {
    json!({"path": segments(&DRAFT_FILE), "content": " more"}).as_object().cloned().unwrap()
}

/// The event types of a result, in order.
pub fn kinds(result: &ExecutionResult) -> Vec<String> {
    result.events.iter().map(|e| e.kind.clone()).collect()
}

/// The data of every event of `kind`.
pub fn events_of(result: &ExecutionResult, kind: &str) -> Vec<Value> {
    result.events.iter().filter(|e| e.kind == kind).map(|e| e.data.clone()).collect()
}

/// `(status, code, retryable)` of a result.
pub fn ending(result: &ExecutionResult) -> (ExecutionStatus, Option<String>, Option<bool>) {
    (result.status, result.error.as_ref().map(|e| e.code.clone()), result.error.as_ref().and_then(|e| e.retryable))
}

/// A metadata value of a result.
pub fn meta(result: &ExecutionResult, key: &str) -> Option<Value> {
    result.metadata.as_ref().and_then(|m| m.get(key)).cloned()
}
