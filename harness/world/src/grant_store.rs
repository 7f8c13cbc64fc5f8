//! The world's trusted grant source with fault injection (working grants of
//! the acting agent), and the trusted edits it shares with the delegation
//! chain resolver (`sharedos_authz::memory::InMemoryResolver`, every grant,
//! roots included). Both hand out copies, so nothing a caller does to a
//! loaded grant reaches the store; both share unedited grants with the
//! world's grant set and copy a grant only when an edit names it.

use futures::future::LocalBoxFuture;
use serde_json::Value;
use sharedos_authz::memory::InMemoryResolver;
use sharedos_kernel::ports::GrantSource;
use sharedos_model::access::AccessContext;
use sharedos_model::capability::Grant;
use sharedos_port::signal::AbortSignal;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// A trusted edit of a stored grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantEdit {
    /// Sets `revokedAt`.
    Revoke {
        /// The grant.
        grant_id: String,
        /// When.
        at: String,
    },
    /// Sets `constraints.expiresAt`.
    Expire {
        /// The grant.
        grant_id: String,
        /// When.
        at: String,
    },
}

impl GrantEdit {
    /// Whether the edit names `grant`.
    #[must_use]
    pub fn names(&self, grant: &Grant) -> bool {
        match self {
            GrantEdit::Revoke { grant_id, .. } | GrantEdit::Expire { grant_id, .. } => *grant_id == grant.id,
        }
    }

    /// Applies the edit to `grant` when it is the one named; true if it was.
    pub fn apply(&self, grant: &mut Grant) -> bool {
        if !self.names(grant) {
            return false;
        }
        match self {
            GrantEdit::Revoke { at, .. } => grant.revoked_at = Some(at.clone()),
            GrantEdit::Expire { at, .. } => grant.constraints.expires_at = Some(at.clone()),
        }
        true
    }

    /// Applies the edit to the chain resolver's copy; true if it named a grant there.
    pub fn apply_to_chain(&self, chain: &InMemoryResolver) -> bool {
        match self {
            GrantEdit::Revoke { grant_id, at } => chain.revoke(grant_id, at),
            GrantEdit::Expire { grant_id, at } => chain.expire(grant_id, at),
        }
    }
}

/// A one-shot trusted edit run right after a given load.
type AfterLoad = Box<dyn FnOnce(&WorldGrantSource)>;

/// The grant source over the agent's working grants.
#[derive(Default)]
pub struct WorldGrantSource {
    grants: RefCell<Vec<Rc<Grant>>>,
    attempts: Cell<u64>,
    served: Cell<u64>,
    fail_after: Cell<Option<u64>>,
    after_load: RefCell<Option<(u64, AfterLoad)>>,
    material: RefCell<Option<Value>>,
}

impl WorldGrantSource {
    /// A source holding copies of `grants` in store order.
    #[must_use]
    pub fn new<G: Clone + Into<Rc<Grant>>>(grants: &[G]) -> WorldGrantSource {
        let grants = grants.iter().map(|g| g.clone().into()).collect();
        WorldGrantSource { grants: RefCell::new(grants), ..WorldGrantSource::default() }
    }

    /// Every load asked, failed ones included.
    #[must_use]
    pub fn load_attempts(&self) -> u64 {
        self.attempts.get()
    }

    /// Loads that returned grants.
    #[must_use]
    pub fn loads(&self) -> u64 {
        self.served.get()
    }

    /// Every load after `n` successful ones fails (`0`: the first already fails).
    pub fn fail_after_loads(&self, n: u64) {
        self.fail_after.set(Some(n));
    }

    /// Runs `edit` once, right after successful load number `n` (1-based).
    pub fn after_loads(&self, n: u64, edit: impl FnOnce(&WorldGrantSource) + 'static) {
        *self.after_load.borrow_mut() = Some((n, Box::new(edit)));
    }

    /// Serves `material` verbatim instead of the grants (bad material faults).
    pub fn serve_material(&self, material: Value) {
        *self.material.borrow_mut() = Some(material);
    }

    /// Applies a trusted edit; true when a stored grant was changed.
    pub fn edit(&self, edit: &GrantEdit) -> bool {
        let mut changed = false;
        for grant in self.grants.borrow_mut().iter_mut().filter(|g| edit.names(g)) {
            changed |= edit.apply(Rc::make_mut(grant));
        }
        changed
    }

    /// Revokes `grant_id` at `at`.
    pub fn revoke(&self, grant_id: &str, at: &str) -> bool {
        self.edit(&GrantEdit::Revoke { grant_id: grant_id.to_string(), at: at.to_string() })
    }

    /// Makes `grant_id` expire at `at`.
    pub fn expire(&self, grant_id: &str, at: &str) -> bool {
        self.edit(&GrantEdit::Expire { grant_id: grant_id.to_string(), at: at.to_string() })
    }

    /// Copies of the stored grants, in store order.
    #[must_use]
    pub fn grants(&self) -> Vec<Grant> {
        self.grants.borrow().iter().map(|g| (**g).clone()).collect()
    }

    /// Copies of the grants `context` may exercise: same world, subject the
    /// actor, issuer the authority.
    #[must_use]
    pub fn grants_for(&self, context: &AccessContext) -> Vec<Rc<Grant>> {
        self.grants
            .borrow()
            .iter()
            .filter(|g| {
                g.namespace_id == context.namespace_id && g.subject == context.actor && g.issuer == context.authority
            })
            .cloned()
            .collect()
    }

    fn load_now(&self, context: &AccessContext) -> Result<Value, String> {
        self.load_with(|source| match source.material.borrow().clone() {
            Some(material) => Ok(material),
            None => serde_json::to_value(source.grants_for(context)).map_err(|e| e.to_string()),
        })
    }

    /// One load: counted, refused once the armed outage is due, and
    /// followed by a due one-shot edit after `answer` took its copies.
    fn load_with<T>(&self, answer: impl FnOnce(&WorldGrantSource) -> Result<T, String>) -> Result<T, String> {
        self.attempts.set(self.attempts.get() + 1);
        if self.fail_after.get().is_some_and(|n| self.served.get() >= n) {
            return Err("the grant store is unreachable".to_string());
        }
        let material = answer(self)?;
        self.served.set(self.served.get() + 1);
        let due = matches!(&*self.after_load.borrow(), Some((n, _)) if *n == self.served.get());
        if due {
            let pending = self.after_load.borrow_mut().take();
            if let Some((_, edit)) = pending {
                edit(self);
            }
        }
        Ok(material)
    }
}

impl GrantSource for WorldGrantSource {
    fn load<'a>(
        &'a self,
        context: &'a AccessContext,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>> {
        Box::pin(async move { self.load_now(context) })
    }

    fn load_typed<'a>(
        &'a self,
        context: &'a AccessContext,
        _signal: &'a AbortSignal,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<Rc<Grant>>, String>>> {
        // Verbatim material (a bad-material fault) only exists as JSON.
        if self.material.borrow().is_some() {
            return None;
        }
        Some(Box::pin(async move { self.load_with(|source| Ok(source.grants_for(context))) }))
    }
}
