//! Building a fresh conformance world for one condition: the reference
//! kernel wired to the fixture stores, with the condition's faults armed by
//! trusted setup before any turn runs.

use crate::world_options::{BrokerMode, EscalationMode, WorldOptions};
use sharedos_authz::ports::UsageStore;
use sharedos_kernel::error::KernelError;
use sharedos_kernel::escalation::escalation_tool;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::{IdFactory, MessageIdFactory, ToolHandler};
use sharedos_kernel::world::audit_log::RecordingAudit;
use sharedos_kernel::world::broker::notion_search_definition;
use sharedos_kernel::world::broker::NotionBroker;
use sharedos_kernel::world::ceiling::FrozenCeiling;
use sharedos_kernel::world::clock::WorldClock;
use sharedos_kernel::world::constants::SEARCH_ACTION;
use sharedos_kernel::world::constants::{instant_after, now_instant};
use sharedos_kernel::world::file_store::FileStore;
use sharedos_kernel::world::file_tools::file_tools;
use sharedos_kernel::world::fixture_tools::admin_grant_issue_definition;
use sharedos_kernel::world::fixture_tools::fixture_tools;
use sharedos_kernel::world::grant_store::{ChainResolver, WorldGrantSource};
use sharedos_kernel::world::grants::{grant_set, GrantOptions, GrantSet};
use sharedos_kernel::world::transport::{RecordingTransport, ReplyRouter, TransportMode};
use sharedos_kernel::world::usage::{MemoryUsage, UnreachableUsage};
use sharedos_model::instant::Instant;
use sharedos_model::tool::ToolDefinition;
use std::cell::Cell;
use std::rc::Rc;

/// One condition's world: the kernel and the host-side handles a runner
/// reads world effects from.
pub struct World {
    /// The reference kernel under test.
    pub kernel: Rc<Kernel>,
    /// The grants the condition issued (roots included), before any edit.
    pub grants: GrantSet,
    /// The trusted grant source.
    pub grant_source: Rc<WorldGrantSource>,
    /// The trusted ancestor source.
    pub chain: Rc<ChainResolver>,
    /// Every audit record the kernel wrote.
    pub audit: Rc<RecordingAudit>,
    /// The message transport.
    pub transport: Rc<RecordingTransport>,
    /// The seeded file store.
    pub files: Rc<FileStore>,
    /// The world clock (frozen or operation-indexed).
    pub clock: WorldClock,
    /// Every tool definition a turn request lists: the registered tools, the
    /// kernel's message tool, the brokered tool and the never-registered stub
    /// (so the permission filter, not absence from the request, refuses them).
    pub requested_tools: Vec<ToolDefinition>,
}

/// A world that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// The kernel refused its configuration.
    #[error("build the reference kernel: {0}")]
    Kernel(#[from] KernelError),
    /// `now` did not parse (the loader checks it, so this is a harness bug).
    #[error("parse the world's `now` option {0:?}")]
    Now(String),
}

impl World {
    /// Builds the world `options` describe.
    ///
    /// # Errors
    /// When the kernel cannot be built from the fixtures.
    pub fn build(options: &WorldOptions) -> Result<World, WorldError> {
        let base = match &options.now {
            Some(text) => Instant::parse(text).ok_or_else(|| WorldError::Now(text.clone()))?,
            None => now_instant(),
        };
        let grants = grant_set(&grant_options(options));
        let grant_source = Rc::new(WorldGrantSource::new(&grants.agent));
        let chain = Rc::new(ChainResolver::new(&grants.all()));
        let clock = if options.expires_after_operations.is_some() {
            WorldClock::operation_indexed(base)
        } else {
            WorldClock::frozen(base)
        };
        arm_grant_edits(options, &grant_source, &chain, base);
        let audit = Rc::new(RecordingAudit::new());
        audit.set_observer(clock.observer());
        if let Some(n) = options.audit_fails_after_operations {
            audit.fail_after_operations(u64::from(n));
        }
        let transport = Rc::new(RecordingTransport::new(TransportMode::Accepting));
        if let Some(n) = options.route_revoked_after_deliveries {
            transport.close_lease_after(u64::from(n));
        }
        let files = Rc::new(FileStore::seeded());
        let registered = registered_tools(&files);
        let kernel = build_kernel(options, &registered, &grant_source, &chain, &audit, &transport)?;
        let mut requested_tools: Vec<ToolDefinition> = registered.iter().map(|h| h.definition().clone()).collect();
        requested_tools.extend(kernel.messages_request_handler().map(|h| h.definition().clone()));
        requested_tools.push(notion_search_definition(SEARCH_ACTION));
        requested_tools.push(admin_grant_issue_definition());
        Ok(World {
            kernel: Rc::new(kernel),
            grants,
            grant_source,
            chain,
            audit,
            transport,
            files,
            clock,
            requested_tools,
        })
    }
}

fn grant_options(options: &WorldOptions) -> GrantOptions {
    GrantOptions {
        bounded: options.bounded || options.usage_store_unavailable,
        usage_store_unavailable: options.usage_store_unavailable,
        over_broad_delegation: options.over_broad_delegation,
        restorable: options.restorable,
        broker_granted: options.broker == Some(BrokerMode::Granted),
        escalation_withheld: options.escalation == Some(EscalationMode::Withheld),
        ledger_accounts: false,
    }
}

/// Revocations and expiries are store edits made by trusted setup, applied
/// to the grant source and the chain resolver alike.
fn arm_grant_edits(options: &WorldOptions, source: &Rc<WorldGrantSource>, chain: &Rc<ChainResolver>, base: Instant) {
    let now = base.to_rfc3339();
    for id in options.revoked.iter().flatten() {
        source.revoke(id, &now);
        chain.revoke(id, &now);
    }
    for id in options.expired.iter().flatten() {
        source.expire(id, &now);
        chain.expire(id, &now);
    }
    if let Some(expiry) = &options.expires_after_operations {
        let at = instant_after(&now, u64::from(expiry.operations));
        for id in &expiry.grant_ids {
            source.expire(id, &at);
            chain.expire(id, &at);
        }
    }
    if let Some(revocation) = &options.revoked_after_turn {
        let ids = revocation.grant_ids.clone();
        let chain = Rc::clone(chain);
        let at = now.clone();
        source.after_loads(u64::from(revocation.turn), move |store| {
            for id in &ids {
                store.revoke(id, &at);
                chain.revoke(id, &at);
            }
        });
    }
    if let Some(n) = options.authority_fails_after_loads {
        source.fail_after_loads(u64::from(n));
    }
}

/// The statically registered tools, in registration order: the twelve file
/// tools, the fixtures, then the escalation affordance.
fn registered_tools(files: &Rc<FileStore>) -> Vec<Rc<dyn ToolHandler>> {
    let mut tools = file_tools(files);
    tools.extend(fixture_tools(files));
    tools.push(escalation_tool());
    tools
}

fn build_kernel(
    options: &WorldOptions,
    registered: &[Rc<dyn ToolHandler>],
    grant_source: &Rc<WorldGrantSource>,
    chain: &Rc<ChainResolver>,
    audit: &Rc<RecordingAudit>,
    transport: &Rc<RecordingTransport>,
) -> Result<Kernel, KernelError> {
    let usage: Rc<dyn UsageStore> =
        if options.usage_store_unavailable { Rc::new(UnreachableUsage::new()) } else { Rc::new(MemoryUsage::new()) };
    let audit_counter = Rc::new(Cell::new(0_u64));
    let audit_ids: IdFactory = Rc::new(move || {
        audit_counter.set(audit_counter.get() + 1);
        format!("audit-{}", audit_counter.get())
    });
    let message_ids: MessageIdFactory = Rc::new(|context, _call| format!("{}-message-request", context.trace_id));
    let mut builder = Kernel::builder(grant_source.clone(), audit.clone())
        .usage_store(usage)
        .delegation_resolver(chain.clone())
        .audit_ids(audit_ids)
        .message_ids(message_ids)
        .message_transport(transport.clone())
        .message_router(Rc::new(ReplyRouter::new(transport.clone())));
    for handler in registered {
        builder = builder.tool(Rc::clone(handler));
    }
    if options.host_policy_frozen {
        builder = builder.host_ceiling(Rc::new(FrozenCeiling::new()));
    }
    if options.broker.is_some() {
        builder = builder.provider(Rc::new(NotionBroker::new(options.broker_moved_after_listing)));
    }
    builder.build()
}

/// Version of the fixture behaviours (stores, tools, broker, transport); it
/// joins the world hash so a changed fixture is a different world.
pub const FIXTURE_VERSION: &str = "sharedos-conformance/fixtures/v1";

impl World {
    /// What the world-set hash covers for one condition: the arming as
    /// declared, the grants as issued and as the grant store holds them after
    /// arming, the enabled namespaces, every tool definition a turn is
    /// offered, and the fixture version.
    #[must_use]
    pub fn description(&self, options: &WorldOptions) -> serde_json::Value {
        serde_json::json!({
            "condition": options,
            "namespaceId": sharedos_kernel::world::constants::NAMESPACE_ID,
            "enabledToolNamespaces": sharedos_kernel::world::constants::enabled_tool_namespaces(),
            "grantsIssued": self.grants.all(),
            "grantsHeld": self.grant_source.grants(),
            "tools": self.requested_tools,
            "fixtures": FIXTURE_VERSION,
        })
    }
}
