//! A conformance world: the reference kernel over the world's fixtures, the
//! turn requests made of it, and the executors that seat a runtime over it.

use serde_json::{json, Map, Value};
use sharedos_envelope::executor::Executor;
use sharedos_envelope::options::{ExecutorOptions, SequentialIds};
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_kernel::escalation::escalation_tool;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::ToolHandler;
use sharedos_model::audit::AuditType;
use sharedos_model::execution::{ExecutionOptions, ExecutionRequest};
use sharedos_model::message::{MessageEnvelope, PROTOCOL_VERSION};
use sharedos_model::tool::ToolDefinition;
use sharedos_world::constants::{agent, context, segments, NOW, POLICY_FILE, PURPOSE, TRACE_ID};
use sharedos_world::fixtures::WorldFixtures;
use sharedos_world::options::WorldOptions;
use std::rc::Rc;

/// The execution id of every turn a [`World`] requests.
pub const EXECUTION_ID: &str = "world-test.turn";

/// The reference kernel over armed fixtures.
pub struct World {
    /// The kernel.
    pub kernel: Rc<Kernel>,
    /// The stores, audit log and clock.
    pub fixtures: WorldFixtures,
    /// Every tool a request lists: every tool the kernel registered.
    pub requested_tools: Vec<ToolDefinition>,
}

impl World {
    /// The baseline world: every working grant, escalation granted.
    #[must_use]
    pub fn baseline() -> World {
        World::build(&WorldOptions::default(), |_| Vec::new())
    }

    /// The world `options` describe. Its kernel has the world's grants,
    /// usage store, delegation chain and messaging, and registers every
    /// static tool, the escalation affordance and the `extra` tools made
    /// over the fixtures.
    pub fn build(options: &WorldOptions, extra: impl FnOnce(&WorldFixtures) -> Vec<Rc<dyn ToolHandler>>) -> World {
        let fixtures = WorldFixtures::build(options);
        let mut registered = fixtures.static_tools();
        registered.push(escalation_tool());
        registered.extend(extra(&fixtures));
        let mut builder = Kernel::builder(fixtures.grant_source.clone(), fixtures.audit.clone())
            .usage_store(Rc::clone(&fixtures.usage))
            .delegation_resolver(fixtures.chain.clone())
            .message_transport(fixtures.transport.clone())
            .message_router(fixtures.router.clone());
        for handler in &registered {
            builder = builder.tool(Rc::clone(handler));
        }
        let kernel = builder.build().unwrap();
        let requested_tools = registered.iter().map(|handler| ToolDefinition::clone(handler.definition())).collect();
        World { kernel: Rc::new(kernel), fixtures, requested_tools }
    }

    /// The agent's turn [`EXECUTION_ID`] asking to read the policy file,
    /// listing every tool, under `options`.
    #[must_use]
    pub fn request(&self, options: Option<ExecutionOptions>) -> ExecutionRequest {
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
            options,
            metadata: None,
        }
    }

    /// An executor seating `runtime` over this world on the world's clock,
    /// with a drain grace of `grace_ms`.
    #[must_use]
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

    /// The outcome of every `tool.invoked` audit record, in order.
    #[must_use]
    pub fn invoked(&self) -> Vec<String> {
        self.fixtures
            .audit
            .of_kind(AuditType::ToolInvoked)
            .iter()
            .map(|event| serde_json::to_value(event).unwrap()["outcome"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// Arguments reading the policy file.
#[must_use]
pub fn read_policy() -> Map<String, Value> {
    crate::json::object(json!({"path": segments(&POLICY_FILE)}))
}
