//! The kernel value: its shared core (ports, hooks, authorizer) and what a
//! turn's operations reach through it (a host builds one with `Kernel::builder`).

use crate::lease_table::LeaseTable;
use crate::ports::{
    AuditErrorHook, AuditSink, ContextToolProvider, GrantSource, IdFactory, MessageCapabilityResolver,
    MessageIdFactory, MessageRequestRouter, MessageTransport, PolicySource, ProviderError, ProviderErrorHook,
    ToolHandler,
};
use sharedos_authz::authorizer::Authorizer;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The ports and hooks every kernel operation shares. Tool handlers the
/// kernel owns hold it too, which is why it is separate from the lease table.
pub(crate) struct Core {
    /// The only way authority enters.
    pub(crate) grant_source: Rc<dyn GrantSource>,
    /// Optional host policy.
    pub(crate) policy_source: Option<Rc<dyn PolicySource>>,
    /// Where records go.
    pub(crate) audit_sink: Rc<dyn AuditSink>,
    /// The decision walk and its stores.
    pub(crate) authorizer: Authorizer,
    /// Message delivery.
    pub(crate) transport: Option<Rc<dyn MessageTransport>>,
    /// Reply lookup for `messages.request`.
    pub(crate) router: Option<Rc<dyn MessageRequestRouter>>,
    /// Send requirement; `None` is the recipient-scoped default.
    pub(crate) message_resolver: Option<Rc<dyn MessageCapabilityResolver>>,
    /// Audit record ids.
    pub(crate) audit_ids: IdFactory,
    /// Model-authored message ids.
    pub(crate) message_ids: MessageIdFactory,
    /// Dropped post-effect records.
    pub(crate) on_audit_error: Option<AuditErrorHook>,
    /// Port diagnostics.
    pub(crate) on_provider_error: Option<ProviderErrorHook>,
    /// Bound on post-effect writes, in (virtual) milliseconds.
    pub(crate) audit_write_timeout_ms: Option<u64>,
    /// Transport codes behind a `messages.request` refusal, by call id, handed
    /// from the kernel-owned tool to the call's audit record.
    pub(crate) message_causes: RefCell<BTreeMap<String, String>>,
}

impl Core {
    /// Reports a port failure to the host's diagnostics hook, if any.
    pub(crate) fn report(&self, error: ProviderError) {
        if let Some(hook) = &self.on_provider_error {
            hook(&error);
        }
    }
}

/// The reference SharedOS kernel.
pub struct Kernel {
    pub(crate) core: Rc<Core>,
    /// Process-wide handlers, in registration order.
    pub(crate) static_tools: Vec<Rc<dyn ToolHandler>>,
    /// Per-context providers, sorted by id.
    pub(crate) providers: Vec<Rc<dyn ContextToolProvider>>,
    /// The kernel-owned `messages.request`, when transport and router are both set.
    pub(crate) message_tool: Option<Rc<dyn ToolHandler>>,
    /// Open turn leases.
    pub(crate) leases: Rc<LeaseTable>,
}

impl Kernel {
    /// The kernel-owned `messages.request` handler, when it is registered.
    #[must_use]
    pub fn messages_request_handler(&self) -> Option<Rc<dyn ToolHandler>> {
        self.message_tool.clone()
    }

    /// How many turn leases are open (for hosts and tests checking cleanup).
    #[must_use]
    pub fn open_lease_count(&self) -> usize {
        self.leases.len()
    }
}
