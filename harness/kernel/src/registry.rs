//! The effective tool registry of a context: static handlers, then the
//! kernel's `messages.request` (when transport and router are configured),
//! then each provider's handlers in provider-id order. A duplicate name or a
//! failing provider makes the whole registry unavailable, never partial (K31,
//! K32). Within a turn it is resolved once and held on the lease (K30).

use crate::kernel::Kernel;
use crate::lease::TurnState;
use crate::ports::{ProviderError, ProviderErrorOrigin, ToolHandler};
use crate::signal::AbortSignal;
use sharedos_model::access::AccessContext;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Handlers in catalogue order, looked up by name.
pub struct Registry {
    handlers: Vec<Rc<dyn ToolHandler>>,
    by_name: BTreeMap<String, usize>,
}

impl Registry {
    /// Builds a registry, refusing a repeated name.
    ///
    /// # Errors
    /// The repeated name.
    pub fn new(handlers: Vec<Rc<dyn ToolHandler>>) -> Result<Registry, String> {
        let mut by_name = BTreeMap::new();
        for (i, handler) in handlers.iter().enumerate() {
            let name = handler.definition().name.clone();
            if by_name.insert(name.clone(), i).is_some() {
                return Err(name);
            }
        }
        Ok(Registry { handlers, by_name })
    }

    /// The handler registered under `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Rc<dyn ToolHandler>> {
        self.by_name.get(name).and_then(|&i| self.handlers.get(i))
    }

    /// Every handler, in catalogue order.
    #[must_use]
    pub fn handlers(&self) -> &[Rc<dyn ToolHandler>] {
        &self.handlers
    }
}

impl Kernel {
    /// The registry for an operation: the turn's held one, or resolved now.
    /// `Err` carries nothing a runtime may see; diagnostics went to the hook.
    pub(crate) async fn registry(
        &self,
        state: &TurnState,
        context: &AccessContext,
        signal: &AbortSignal,
    ) -> Result<Rc<Registry>, String> {
        match &state.lease {
            Some(lease) => lease.registry.get_or_init(|| self.resolve_registry(context, signal)).await.clone(),
            None => self.resolve_registry(context, signal).await,
        }
    }

    async fn resolve_registry(&self, context: &AccessContext, signal: &AbortSignal) -> Result<Rc<Registry>, String> {
        let mut handlers: Vec<Rc<dyn ToolHandler>> = self.static_tools.clone();
        if let Some(tool) = &self.message_tool {
            handlers.push(Rc::clone(tool));
        }
        for provider in &self.providers {
            match provider.list_tools(context, signal).await {
                Ok(tools) => handlers.extend(tools),
                Err(detail) => {
                    let origin = ProviderErrorOrigin::ToolProvider(provider.id().to_string());
                    self.core.report(ProviderError { origin, detail: detail.clone() });
                    return Err(detail);
                }
            }
        }
        Registry::new(handlers).map(Rc::new).map_err(|name| {
            let detail = format!("tool name {name} is registered twice");
            self.core.report(ProviderError { origin: ProviderErrorOrigin::ToolHandler(name), detail: detail.clone() });
            detail
        })
    }
}
