//! The effective tool registry of a context: static handlers, then the
//! kernel's `messages.request` (when transport and router are configured),
//! then each provider's handlers in provider-id order. A duplicate name or a
//! failing provider makes the whole registry unavailable, never partial (K31,
//! K32). Within a turn it is resolved once and held on the lease (K30).

use crate::ports::ToolHandler;
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
