//! How a host builds a kernel.
//!
//! A grant source and an audit sink are mandatory: authority enters only
//! through the grant source (K2), and every decision is written somewhere.

use crate::kernel::{Core, Kernel};
use crate::lease_table::LeaseTable;
use crate::message_tool::MessageRequestTool;
use crate::ports::{
    counter_ids, AuditErrorHook, AuditSink, ContextToolProvider, GrantSource, IdFactory, MessageCapabilityResolver,
    MessageIdFactory, MessageRequestRouter, MessageTransport, PolicySource, ProviderErrorHook, ToolHandler,
};
use sharedos_authz::authorizer::Authorizer;
use sharedos_authz::ports::{DelegationResolver, GrantVerifier, HostCeiling, UsageStore};
use sharedos_port::error::KernelError;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

impl Kernel {
    /// Starts a builder; both ports are mandatory.
    #[must_use]
    pub fn builder(grant_source: Rc<dyn GrantSource>, audit_sink: Rc<dyn AuditSink>) -> KernelBuilder {
        KernelBuilder {
            grant_source,
            audit_sink,
            policy_source: None,
            authorizer: Authorizer::default(),
            tools: Vec::new(),
            providers: Vec::new(),
            transport: None,
            router: None,
            message_resolver: None,
            audit_ids: None,
            message_ids: None,
            on_audit_error: None,
            on_provider_error: None,
            audit_write_timeout_ms: None,
        }
    }
}

/// Configures a [`Kernel`].
pub struct KernelBuilder {
    grant_source: Rc<dyn GrantSource>,
    audit_sink: Rc<dyn AuditSink>,
    policy_source: Option<Rc<dyn PolicySource>>,
    authorizer: Authorizer,
    tools: Vec<Rc<dyn ToolHandler>>,
    providers: Vec<Rc<dyn ContextToolProvider>>,
    transport: Option<Rc<dyn MessageTransport>>,
    router: Option<Rc<dyn MessageRequestRouter>>,
    message_resolver: Option<Rc<dyn MessageCapabilityResolver>>,
    audit_ids: Option<IdFactory>,
    message_ids: Option<MessageIdFactory>,
    on_audit_error: Option<AuditErrorHook>,
    on_provider_error: Option<ProviderErrorHook>,
    audit_write_timeout_ms: Option<u64>,
}

impl KernelBuilder {
    /// Installs a host policy source.
    #[must_use]
    pub fn policy_source(mut self, source: Rc<dyn PolicySource>) -> Self {
        self.policy_source = Some(source);
        self
    }

    /// Installs the usage store bounded grants need.
    #[must_use]
    pub fn usage_store(mut self, store: Rc<dyn UsageStore>) -> Self {
        self.authorizer.usage = Some(store);
        self
    }

    /// Installs the trusted ancestor source for delegation chains.
    #[must_use]
    pub fn delegation_resolver(mut self, resolver: Rc<dyn DelegationResolver>) -> Self {
        self.authorizer.resolver = Some(resolver);
        self
    }

    /// Installs a grant verifier.
    #[must_use]
    pub fn grant_verifier(mut self, verifier: Rc<dyn GrantVerifier>) -> Self {
        self.authorizer.verifier = Some(verifier);
        self
    }

    /// Installs a host ceiling.
    #[must_use]
    pub fn host_ceiling(mut self, ceiling: Rc<dyn HostCeiling>) -> Self {
        self.authorizer.ceiling = Some(ceiling);
        self
    }

    /// Registers a process-wide tool (registration grants nothing, K28).
    #[must_use]
    pub fn tool(mut self, handler: Rc<dyn ToolHandler>) -> Self {
        self.tools.push(handler);
        self
    }

    /// Registers the `sharedos.escalate` affordance.
    #[must_use]
    pub fn escalation_tool(self) -> Self {
        self.tool(crate::escalation::escalation_tool())
    }

    /// Attaches a per-context tool provider.
    #[must_use]
    pub fn provider(mut self, provider: Rc<dyn ContextToolProvider>) -> Self {
        self.providers.push(provider);
        self
    }

    /// Installs the message transport.
    #[must_use]
    pub fn message_transport(mut self, transport: Rc<dyn MessageTransport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Installs the reply router.
    #[must_use]
    pub fn message_router(mut self, router: Rc<dyn MessageRequestRouter>) -> Self {
        self.router = Some(router);
        self
    }

    /// Replaces the recipient-scoped send requirement.
    #[must_use]
    pub fn message_capability_resolver(mut self, resolver: Rc<dyn MessageCapabilityResolver>) -> Self {
        self.message_resolver = Some(resolver);
        self
    }

    /// Replaces the audit id factory (default: `audit-1`, `audit-2`, ...).
    #[must_use]
    pub fn audit_ids(mut self, ids: IdFactory) -> Self {
        self.audit_ids = Some(ids);
        self
    }

    /// Replaces the message id factory (default: `<traceId>-message-request`).
    #[must_use]
    pub fn message_ids(mut self, ids: MessageIdFactory) -> Self {
        self.message_ids = Some(ids);
        self
    }

    /// Receives post-effect records the sink dropped.
    #[must_use]
    pub fn on_audit_error(mut self, hook: AuditErrorHook) -> Self {
        self.on_audit_error = Some(hook);
        self
    }

    /// Receives port diagnostics.
    #[must_use]
    pub fn on_provider_error(mut self, hook: ProviderErrorHook) -> Self {
        self.on_provider_error = Some(hook);
        self
    }

    /// Bounds post-effect audit writes (virtual milliseconds).
    #[must_use]
    pub fn audit_write_timeout_ms(mut self, millis: u64) -> Self {
        self.audit_write_timeout_ms = Some(millis);
        self
    }

    /// Builds the kernel.
    ///
    /// # Errors
    /// `InvalidInput` when two static tools, or two providers, share a name or id.
    pub fn build(self) -> Result<Kernel, KernelError> {
        let mut names = BTreeSet::new();
        for tool in &self.tools {
            let name = &tool.definition().name;
            if !names.insert(name.clone()) {
                return Err(KernelError::InvalidInput(format!("register tool {name} once")));
            }
        }
        let mut providers = self.providers;
        providers.sort_by(|a, b| a.id().cmp(b.id()));
        if providers.windows(2).any(|w| w[0].id() == w[1].id()) {
            return Err(KernelError::InvalidInput("attach each tool provider id once".to_string()));
        }
        let core = Rc::new(Core {
            grant_source: self.grant_source,
            policy_source: self.policy_source,
            audit_sink: self.audit_sink,
            authorizer: self.authorizer,
            transport: self.transport,
            router: self.router,
            message_resolver: self.message_resolver,
            audit_ids: self.audit_ids.unwrap_or_else(|| counter_ids("audit")),
            message_ids: self.message_ids.unwrap_or_else(crate::ports::trace_message_ids),
            on_audit_error: self.on_audit_error,
            on_provider_error: self.on_provider_error,
            audit_write_timeout_ms: self.audit_write_timeout_ms,
            message_causes: RefCell::new(BTreeMap::new()),
        });
        let message_tool: Option<Rc<dyn ToolHandler>> = match (&core.transport, &core.router) {
            (Some(_), Some(_)) => Some(Rc::new(MessageRequestTool::new(Rc::clone(&core)))),
            _ => None,
        };
        Ok(Kernel { core, static_tools: self.tools, providers, message_tool, leases: Rc::new(LeaseTable::default()) })
    }
}
