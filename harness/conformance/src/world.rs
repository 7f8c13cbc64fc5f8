//! Building a fresh conformance world for one condition: the reference
//! kernel wired to the fixture stores, with the condition's faults armed by
//! trusted setup before any turn runs.

use crate::world_options::{BrokerMode, EscalationMode, WorldOptions};
use sharedos_kernel::error::KernelError;
use sharedos_kernel::escalation::escalation_tool;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::memos::HashMemos;
use sharedos_kernel::ports::ToolHandler;
use sharedos_kernel::world::broker::notion_search_definition;
use sharedos_kernel::world::constants::SEARCH_ACTION;
use sharedos_kernel::world::fixture_tools::admin_grant_issue_definition;
use sharedos_kernel::world::fixtures::{self, BrokerOption, WorldFixtures};
use sharedos_kernel::world::grants::GrantOptions;
use sharedos_kernel::world::ledger::Ledger;
use sharedos_model::tool::ToolDefinition;
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
        World::build_sharing(options, Rc::default())
    }

    /// [`World::build`], its kernel remembering hashes in `memos`, which
    /// other worlds of the same run share (see [`HashMemos`]).
    ///
    /// # Errors
    /// When the kernel cannot be built from the fixtures.
    pub fn build_sharing(options: &WorldOptions, memos: Rc<HashMemos>) -> Result<World, WorldError> {
        let fixtures = WorldFixtures::build(&fixture_options(options));
        let mut registered = fixtures.static_tools();
        let ledger = crate::world_options::ledger::attach(options.ledger.as_ref(), &mut registered);
        if let Some(fault) = &options.audit_fails_at {
            fault.arm(&fixtures.audit);
        }
        registered.push(escalation_tool());
        let kernel = build_kernel(&fixtures, &registered, options, memos)?;
        let mut requested_tools: Vec<ToolDefinition> = registered.iter().map(|h| h.definition().clone()).collect();
        requested_tools.extend(kernel.messages_request_handler().map(|h| h.definition().clone()));
        // A messaging world missing a port still lists the request tool, so
        // the kernel's registration (not the request) is what leaves it out.
        if options.messaging.is_some() && kernel.messages_request_handler().is_none() {
            requested_tools.push(sharedos_kernel::message_tool::messages_request_definition());
        }
        requested_tools.push(notion_search_definition(SEARCH_ACTION));
        requested_tools.push(admin_grant_issue_definition());
        if let Some(list) = &options.request_classifies {
            crate::world_options::classify::apply(list, &mut requested_tools);
        }
        Ok(World { kernel: Rc::new(kernel), fixtures, requested_tools: requested_tools.into(), ledger })
    }
}

/// The fixture arming a condition's options ask for; the envelope's own
/// options (limits, drain grace) are applied by the runner instead.
fn fixture_options(options: &WorldOptions) -> fixtures::WorldOptions {
    let ids = |list: &Option<Vec<String>>| list.clone().unwrap_or_default();
    fixtures::WorldOptions {
        grants: GrantOptions {
            bounded: options.bounded,
            usage_store_unavailable: options.usage_store_unavailable,
            over_broad_delegation: options.over_broad_delegation,
            restorable: options.restorable,
            broker_granted: false,
            escalation_withheld: options.escalation == Some(EscalationMode::Withheld),
            ledger_accounts: options.ledger.is_some(),
        },
        revoked: ids(&options.revoked),
        expired: ids(&options.expired),
        revoked_after_turn: options
            .revoked_after_turn
            .as_ref()
            .map(|r| fixtures::RevokedAfterTurn { turn: u64::from(r.turn), grant_ids: r.grant_ids.clone() }),
        expires_after_operations: options.expires_after_operations.as_ref().map(|e| fixtures::ExpiresAfterOperations {
            operations: u64::from(e.operations),
            grant_ids: e.grant_ids.clone(),
        }),
        authority_fails_after_loads: options.authority_fails_after_loads.map(u64::from),
        audit_fails_after_operations: options.audit_fails_after_operations.map(u64::from),
        route_revoked_after_deliveries: options.route_revoked_after_deliveries.map(u64::from),
        host_policy_frozen: options.host_policy_frozen,
        broker: options.broker.map(|mode| match mode {
            BrokerMode::Registered => BrokerOption::Registered,
            BrokerMode::Granted => BrokerOption::Granted,
        }),
        broker_moved_after_listing: options.broker_moved_after_listing,
        now: options.now.clone(),
        messaging: options.messaging.as_ref().map(crate::messaging::options::MessagingOptions::arming),
    }
}

fn build_kernel(
    fixtures: &WorldFixtures,
    registered: &[Rc<dyn ToolHandler>],
    options: &WorldOptions,
    memos: Rc<HashMemos>,
) -> Result<Kernel, KernelError> {
    // The kernel's default id factories (`audit-<n>`, `<traceId>-message-request`)
    // are the conformance world's, except that a messaging world counts its
    // message ids so every request of a turn is told apart.
    let mut builder = Kernel::builder(fixtures.grant_source.clone(), fixtures.audit.clone())
        .usage_store(Rc::clone(&fixtures.usage))
        .delegation_resolver(fixtures.chain.clone())
        .hash_memos(memos);
    let arming = options.messaging.as_ref().map(crate::messaging::options::MessagingOptions::arming);
    if arming.as_ref().is_none_or(|m| m.transport_attached()) {
        builder = builder.message_transport(fixtures.transport.clone());
    }
    if arming.as_ref().is_none_or(|m| m.router_attached()) {
        builder = builder.message_router(fixtures.router.clone());
    }
    if arming.is_some() {
        builder = builder.message_ids(sharedos_kernel::world::messaging::counted_message_ids());
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
        let mut namespaces = sharedos_kernel::world::constants::enabled_tool_namespaces();
        if self.ledger.is_some() {
            namespaces.push(crate::world_options::ledger::LEDGER_TOOL_NAMESPACE.to_string());
        }
        namespaces
    }
}

/// Version of the fixture behaviours (stores, tools, broker, transport); it
/// joins the world hash so a changed fixture is a different world.
pub const FIXTURE_VERSION: &str = "sharedos-conformance/fixtures/v1";
