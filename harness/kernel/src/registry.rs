//! The effective tool registry of a context: static handlers, then the
//! kernel's `messages.request` (when transport and router are configured),
//! then each provider's handlers in provider-id order. A duplicate name or a
//! failing provider makes the whole registry unavailable, never partial (K31,
//! K32). Within a turn it is resolved once and held on the lease (K30).

use crate::kernel::Kernel;
use crate::lease::TurnState;
use crate::ports::{ProviderError, ProviderErrorOrigin, ToolHandler};
use sharedos_model::access::AccessContext;
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;

/// Handlers in catalogue order, looked up by name. A registry holds a
/// few dozen tools and is built for every world and turn, so it scans its
/// handlers rather than keep an index of names.
pub struct Registry {
    handlers: Vec<Rc<dyn ToolHandler>>,
}

impl Registry {
    /// Builds a registry, refusing a repeated name.
    ///
    /// # Errors
    /// The repeated name.
    pub fn new(handlers: Vec<Rc<dyn ToolHandler>>) -> Result<Registry, String> {
        for (i, handler) in handlers.iter().enumerate() {
            let name = &handler.definition().name;
            if handlers[..i].iter().any(|earlier| earlier.definition().name == *name) {
                return Err(name.clone());
            }
        }
        Ok(Registry { handlers })
    }

    /// The handler registered under `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Rc<dyn ToolHandler>> {
        self.handlers.iter().find(|handler| handler.definition().name == name)
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
