//! The reference kernel over the conformance world's fixtures, for the rules
//! an envelope turn can only show end to end (escalation, post-effect audit,
//! shared authority hashes).

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use sharedos_envelope::executor::Executor;
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions, SequentialIds};
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_kernel::builder::KernelBuilder;
use sharedos_kernel::escalation::escalation_tool;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::{AuditSink, AuditWriteError, ToolHandler};
use sharedos_model::audit::{AuditEvent, AuditType};
use sharedos_model::execution::{ExecutionRequest, ExecutionResult};
use sharedos_model::message::{MessageEnvelope, PROTOCOL_VERSION};
use sharedos_model::tool::{ToolCall, ToolDefinition};
use sharedos_testkit::call::call;
use sharedos_testkit::world;
use sharedos_world::audit_log::RecordingAudit;
use sharedos_world::constants::{agent, context, turn_trace_id, NOW, PURPOSE};
use sharedos_world::fixtures::WorldFixtures;
use sharedos_world::options::WorldOptions;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// A sink that delays writes of some record types (virtual time), then
/// records them in the world's recording sink.
pub struct SlowSink {
    pub inner: Rc<RecordingAudit>,
    pub delays: Vec<(AuditType, u64)>,
}

impl AuditSink for SlowSink {
    fn write<'a>(&'a self, event: &'a AuditEvent) -> LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if let Some((_, ms)) = self.delays.iter().find(|(kind, _)| *kind == event.kind) {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
            }
            self.inner.write(event).await
        })
    }
}

/// One world: its fixtures, the kernel over them, and what the kernel
/// reported to its post-effect hook.
pub struct Reference {
    pub fixtures: WorldFixtures,
    pub kernel: Rc<Kernel>,
    pub dropped: Rc<RefCell<Vec<(AuditEvent, AuditWriteError)>>>,
}

impl Reference {
    /// The default world, its kernel writing to the world's recording sink.
    pub fn new() -> Reference {
        Reference::build(|fixtures| fixtures.audit.clone(), |builder| builder)
    }

    /// The default world, its kernel writing to the sink `sink` makes, with
    /// `adjust` applied to the kernel builder.
    pub fn build(
        sink: impl FnOnce(&WorldFixtures) -> Rc<dyn AuditSink>,
        adjust: impl FnOnce(KernelBuilder) -> KernelBuilder,
    ) -> Reference {
        let fixtures = WorldFixtures::build(&WorldOptions::default());
        let dropped = Rc::new(RefCell::new(Vec::new()));
        let seen = dropped.clone();
        let audit = sink(&fixtures);
        let mut builder = Kernel::builder(fixtures.grant_source.clone(), audit)
            .usage_store(Rc::clone(&fixtures.usage))
            .delegation_resolver(fixtures.chain.clone())
            .on_audit_error(Rc::new(move |event: &AuditEvent, error: &AuditWriteError| {
                seen.borrow_mut().push((event.clone(), error.clone()));
            }));
        let mut tools: Vec<Rc<dyn ToolHandler>> = fixtures.static_tools();
        tools.push(escalation_tool());
        for tool in tools {
            builder = builder.tool(tool);
        }
        let kernel = Rc::new(adjust(builder).build().unwrap());
        Reference { fixtures, kernel, dropped }
    }

    /// Every tool the kernel registered, as a turn requests them.
    pub fn tools(&self) -> Vec<ToolDefinition> {
        let mut tools: Vec<ToolDefinition> =
            self.fixtures.static_tools().iter().map(|h| ToolDefinition::clone(h.definition())).collect();
        tools.push(ToolDefinition::clone(escalation_tool().definition()));
        tools
    }

    /// The request of turn `turn` (its own trace) listing every tool.
    pub fn request(&self, turn: u32) -> ExecutionRequest {
        let trace_id = turn_trace_id(turn);
        ExecutionRequest {
            version: PROTOCOL_VERSION.into(),
            execution_id: format!("exec-{turn}"),
            agent: agent(),
            context: context(NOW, &trace_id),
            message: MessageEnvelope {
                version: PROTOCOL_VERSION.into(),
                id: format!("msg-{turn}"),
                sender: agent(),
                receiver: agent(),
                purpose: PURPOSE.into(),
                payload: Value::Object(Map::new()),
                trace_id,
                created_at: NOW.into(),
                reply_to: None,
                provenance: None,
            },
            tools: self.tools().into(),
            state: None,
            options: None,
            metadata: None,
        }
    }

    /// Runs turn `turn` with `runtime` seated.
    pub async fn run(&self, runtime: Rc<dyn RuntimePlugin>, turn: u32) -> ExecutionResult {
        let options = ExecutorOptions {
            clock: Rc::new(|| NOW.to_string()),
            create_id: Rc::new(SequentialIds::new(&format!("exec-{turn}.event"))),
            ..ExecutorOptions::default()
        };
        let executor = Executor::new(self.kernel.clone(), runtime, options).unwrap();
        executor.execute(self.request(turn), ExecuteOptions::default()).await.unwrap()
    }

    /// The recorded events of one turn's trace.
    pub fn trail(&self, turn: u32) -> Vec<AuditEvent> {
        let trace = turn_trace_id(turn);
        self.fixtures.audit.events().into_iter().filter(|e| e.trace_id == trace).collect()
    }
}

/// A `files.read` of the seeded policy file on `trace_id`.
pub fn read_policy(id: &str, trace_id: &str) -> ToolCall {
    ToolCall { trace_id: trace_id.into(), ..call(id, "files.read", Value::Object(world::read_policy())) }
}
