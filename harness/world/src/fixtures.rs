//! Every fixture of one conformance world, built and armed from the world
//! options (the kernel wiring is done by the caller).
//! All dangerous conditions are armed here, by trusted setup.

use super::audit_log::RecordingAudit;
use super::broker::NotionBroker;
use super::ceiling::FrozenCeiling;
use super::clock::WorldClock;
use super::constants::{instant_after, NOW};
use super::file_store::FileStore;
use super::file_tools::file_tools;
use super::fixture_tools::fixture_tools;
use super::grant_store::{GrantEdit, WorldGrantSource};
use super::grants::{grant_set, GrantSet};
use super::options::{BrokerMode, WorldOptions};
use super::transport::{RecordingTransport, ReplyRouter};
use sharedos_authz::memory::{FailingUsage, InMemoryResolver, InMemoryUsage};
use sharedos_authz::ports::UsageStore;
use sharedos_kernel::ports::ToolHandler;
use sharedos_model::instant::Instant;
use std::rc::Rc;

/// The built fixtures of one world.
pub struct WorldFixtures {
    /// The grants issued.
    pub grants: GrantSet,
    /// The world clock.
    pub clock: WorldClock,
    /// The file store.
    pub files: Rc<FileStore>,
    /// The grant source.
    pub grant_source: Rc<WorldGrantSource>,
    /// The delegation chain resolver.
    pub chain: Rc<InMemoryResolver>,
    /// The usage counter (unreachable under `usageStoreUnavailable`).
    pub usage: Rc<dyn UsageStore>,
    /// The audit sink.
    pub audit: Rc<RecordingAudit>,
    /// The message transport.
    pub transport: Rc<RecordingTransport>,
    /// The reply router.
    pub router: Rc<ReplyRouter>,
    /// The broker, when attached.
    pub broker: Option<Rc<NotionBroker>>,
    /// The host ceiling, when installed.
    pub ceiling: Option<Rc<FrozenCeiling>>,
}

impl WorldFixtures {
    /// Builds and arms the fixtures `options` describe.
    #[must_use]
    pub fn build(options: &WorldOptions) -> WorldFixtures {
        let grant_options = options.grant_options();
        let mut grants = grant_set(&grant_options);
        if let Some(messaging) = &options.messaging {
            messaging.extend_grants(&mut grants);
        }
        let base_text = options.now.clone().unwrap_or_else(|| NOW.to_string());
        let base = Instant::parse(&base_text).unwrap_or_else(super::constants::now_instant);
        let clock = match options.expires_after_operations {
            Some(_) => WorldClock::operation_indexed(base),
            None => WorldClock::frozen(base),
        };
        let usage: Rc<dyn UsageStore> = if grant_options.usage_store_unavailable {
            Rc::new(FailingUsage::new())
        } else {
            Rc::new(InMemoryUsage::new())
        };
        let transport = Rc::new(RecordingTransport::default());
        let fixtures = WorldFixtures {
            grant_source: Rc::new(WorldGrantSource::new(&grants.agent)),
            chain: Rc::new(InMemoryResolver::new(grants.all())),
            grants,
            clock,
            files: Rc::new(FileStore::seeded()),
            usage,
            audit: Rc::new(RecordingAudit::new()),
            router: Rc::new(ReplyRouter::new(Rc::clone(&transport))),
            transport,
            broker: options.broker.map(|mode| {
                Rc::new(match mode {
                    BrokerMode::Failing => NotionBroker::failing(),
                    BrokerMode::Registered | BrokerMode::Granted => {
                        NotionBroker::new(options.broker_moved_after_listing)
                    }
                })
            }),
            ceiling: match (options.host_policy_malfunctions, options.host_policy_frozen) {
                (true, _) => Some(Rc::new(FrozenCeiling::malfunctioning_on_the_ledger())),
                (false, true) => Some(Rc::new(FrozenCeiling::new())),
                (false, false) => None,
            },
        };
        fixtures.arm(options, &base_text);
        fixtures
    }

    /// Applies a trusted edit to both the grant source and the chain.
    pub fn edit(&self, edit: &GrantEdit) {
        self.grant_source.edit(edit);
        edit.apply_to_chain(&self.chain);
    }

    fn arm(&self, options: &WorldOptions, base: &str) {
        let edits = |ids: &[String], at: &str, revoke: bool| -> Vec<GrantEdit> {
            ids.iter()
                .map(|id| {
                    let (grant_id, at) = (id.clone(), at.to_string());
                    if revoke {
                        GrantEdit::Revoke { grant_id, at }
                    } else {
                        GrantEdit::Expire { grant_id, at }
                    }
                })
                .collect()
        };
        for edit in edits(options.revoked.as_deref().unwrap_or_default(), base, true)
            .iter()
            .chain(edits(options.expired.as_deref().unwrap_or_default(), base, false).iter())
        {
            self.edit(edit);
        }
        if let Some(window) = &options.expires_after_operations {
            for edit in edits(&window.grant_ids, &instant_after(base, u64::from(window.operations)), false) {
                self.edit(&edit);
            }
            self.audit.set_observer(self.clock.observer());
        }
        if let Some(later) = &options.revoked_after_turn {
            let chain = Rc::clone(&self.chain);
            let pending = edits(&later.grant_ids, base, true);
            self.grant_source.after_loads(u64::from(later.turn), move |source| {
                for edit in &pending {
                    source.edit(edit);
                    edit.apply_to_chain(&chain);
                }
            });
        }
        if options.delegation_resolver_fails {
            self.chain.set_failing(true);
        }
        if let Some(n) = options.authority_fails_after_loads {
            self.grant_source.fail_after_loads(u64::from(n));
        }
        if let Some(n) = options.audit_fails_after_operations {
            self.audit.fail_after_operations(u64::from(n));
        }
        if let Some(n) = options.route_revoked_after_deliveries {
            self.transport.close_lease_after(u64::from(n));
        }
        if let Some(messaging) = &options.messaging {
            messaging.arm_ports(&self.transport, &self.router);
            for id in messaging.revoked_grant_ids() {
                self.edit(&GrantEdit::Revoke { grant_id: id, at: base.to_string() });
            }
        }
    }

    /// The statically registered tools: the twelve shipped file tools, then
    /// the five fixtures (the escalation affordance and the request tool are
    /// the kernel's own).
    #[must_use]
    pub fn static_tools(&self) -> Vec<Rc<dyn ToolHandler>> {
        let mut tools = file_tools(&self.files);
        tools.extend(fixture_tools(&self.files));
        tools
    }
}
