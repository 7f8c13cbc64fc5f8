//! Building a fresh conformance world for one condition: the reference
//! kernel wired to the fixture stores, with the condition's faults armed by
//! trusted setup before any turn runs.

use sharedos_kernel::escalation::escalation_tool;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::ToolHandler;
use sharedos_model::tool::ToolDefinition;
use sharedos_port::error::KernelError;
use sharedos_world::broker::notion_search_definition;
use sharedos_world::constants::SEARCH_ACTION;
use sharedos_world::fixture_tools::admin_grant_issue_definition;
use sharedos_world::fixtures::WorldFixtures;
use sharedos_world::ledger::Ledger;
use sharedos_world::options::WorldOptions;
use std::rc::Rc;
use std::sync::Arc;

/// One condition's world: the reference kernel wired to the condition's
/// armed fixtures, which a runner reads world effects from.
pub struct World {
    /// The reference kernel under test.
    pub kernel: Rc<Kernel>,
    /// The stores, tools and clock, armed by trusted setup.
    pub fixtures: WorldFixtures,
    /// Every tool definition a turn request lists: the registered tools, the
    /// kernel's message tool, the brokered tool and the never-registered stub
    /// (so the permission filter, not absence from the request, refuses them).
    pub requested_tools: Arc<[ToolDefinition]>,
    /// The ledger, when the condition attaches it (its balances are world effects).
    pub ledger: Option<Rc<Ledger>>,
}

/// A world that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// The kernel refused its configuration.
    #[error("build the reference kernel: {0}")]
    Kernel(#[from] KernelError),
}

impl World {
    /// Builds the world `options` describe.
    ///
    /// # Errors
    /// When the kernel cannot be built from the fixtures.
    pub fn build(options: &WorldOptions) -> Result<World, WorldError> {
        let fixtures = WorldFixtures::build(options);
        let mut registered = fixtures.static_tools();
        let ledger = sharedos_world::options::ledger::attach(options.ledger.as_ref(), &mut registered);
        if let Some(names) = &options.handler_throws {
            sharedos_world::options::handler::apply(names, &mut registered);
        }
        if let Some(fault) = &options.audit_fails_at {
            fault.arm(&fixtures.audit);
        }
        registered.push(escalation_tool());
        let kernel = build_kernel(&fixtures, &registered, options)?;
        let requested_tools = requested_tools(&registered, &kernel, options);
        Ok(World { kernel: Rc::new(kernel), fixtures, requested_tools, ledger })
    }
}

/// Every tool definition a turn request lists (see [`World::requested_tools`]).
fn requested_tools(
    registered: &[Rc<dyn ToolHandler>],
    kernel: &Kernel,
    options: &WorldOptions,
) -> Arc<[ToolDefinition]> {
    let mut requested_tools: Vec<ToolDefinition> =
        registered.iter().map(|h| ToolDefinition::clone(h.definition())).collect();
    requested_tools.extend(kernel.messages_request_handler().map(|h| ToolDefinition::clone(h.definition())));
    // A messaging world missing a port still lists the request tool, so
    // the kernel's registration (not the request) is what leaves it out.
    if options.messaging.is_some() && kernel.messages_request_handler().is_none() {
        requested_tools.push(sharedos_kernel::message_tool::messages_request_definition());
    }
    requested_tools.push(notion_search_definition(SEARCH_ACTION));
    requested_tools.push(admin_grant_issue_definition());
    if let Some(list) = &options.request_classifies {
        sharedos_world::options::classify::apply(list, &mut requested_tools);
    }
    requested_tools.into()
}

fn build_kernel(
    fixtures: &WorldFixtures,
    registered: &[Rc<dyn ToolHandler>],
    options: &WorldOptions,
) -> Result<Kernel, KernelError> {
    // The kernel's default id factories (`audit-<n>`, `<traceId>-message-request`)
    // are the conformance world's, except that a messaging world counts its
    // message ids so every request of a turn is told apart.
    let mut builder = Kernel::builder(fixtures.grant_source.clone(), fixtures.audit.clone())
        .usage_store(Rc::clone(&fixtures.usage))
        .delegation_resolver(fixtures.chain.clone());
    let arming = options.messaging.as_ref();
    if arming.is_none_or(|m| m.transport_attached()) {
        builder = builder.message_transport(fixtures.transport.clone());
    }
    if arming.is_none_or(|m| m.router_attached()) {
        builder = builder.message_router(fixtures.router.clone());
    }
    if arming.is_some() {
        builder = builder.message_ids(sharedos_world::messaging::counted_message_ids());
    }
    if arming.is_some_and(|m| m.resolver_throws) {
        builder = builder.message_capability_resolver(Rc::new(sharedos_world::messaging::ThrowingResolver));
    }
    for handler in registered {
        builder = builder.tool(Rc::clone(handler));
    }
    if let Some(ceiling) = &fixtures.ceiling {
        builder = builder.host_ceiling(ceiling.clone());
    }
    if let Some(broker) = &fixtures.broker {
        builder = builder.provider(broker.clone());
    }
    builder.build()
}

impl World {
    /// The tool namespaces a turn's context enables: the conformance
    /// world's, plus the ledger's when it is attached.
    #[must_use]
    pub fn enabled_tool_namespaces(&self) -> Vec<String> {
        let mut namespaces = sharedos_world::constants::enabled_tool_namespaces();
        if self.ledger.is_some() {
            namespaces.push(sharedos_world::options::ledger::LEDGER_TOOL_NAMESPACE.to_string());
        }
        namespaces
    }
}
