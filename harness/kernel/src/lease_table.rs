//! The lease table: the turn keys a kernel holds authority for, what each
//! lease holds, and the handles openers close.

use crate::registry::Registry;
use sharedos_authz::authority::AuthorityResolution;
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use sharedos_port::turn_kernel::TurnScope;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use tokio::sync::OnceCell;

/// `turnAuthorityKey`: everything that identifies a turn's authority.
/// `now` and enabled namespaces are deliberately not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TurnKey {
    /// World.
    pub namespace_id: String,
    /// Who acts.
    pub actor: Address,
    /// Whose grants.
    pub authority: Address,
    /// Whose resources.
    pub owner: Address,
    /// Purpose.
    pub purpose: String,
    /// Trace.
    pub trace_id: String,
    /// Per-execution id.
    pub turn_id: Option<String>,
}

impl TurnKey {
    /// The key of `context`.
    #[must_use]
    pub fn of(context: &AccessContext) -> TurnKey {
        TurnKey {
            namespace_id: context.namespace_id.clone(),
            actor: context.actor.clone(),
            authority: context.authority.clone(),
            owner: context.owner.clone(),
            purpose: context.purpose.clone(),
            trace_id: context.trace_id.clone(),
            turn_id: context.turn_id.clone(),
        }
    }

    /// Whether `context` has this key (without building one).
    #[must_use]
    pub fn matches(&self, context: &AccessContext) -> bool {
        self.trace_id == context.trace_id
            && self.turn_id == context.turn_id
            && self.namespace_id == context.namespace_id
            && self.actor == context.actor
            && self.authority == context.authority
            && self.owner == context.owner
            && self.purpose == context.purpose
    }
}

/// What one lease holds.
#[derive(Default)]
pub(crate) struct LeaseEntry {
    /// Openers (and in-flight reservations) holding it.
    refs: Cell<usize>,
    /// Loaded once; concurrent openers wait on the same load.
    pub(crate) authority: OnceCell<Rc<AuthorityResolution>>,
    /// The effective registry, resolved once per turn (success or failure).
    pub(crate) registry: OnceCell<Result<Rc<Registry>, String>>,
    /// The hash of the catalogue the turn published, once it listed.
    pub(crate) catalog_hash: RefCell<Option<String>>,
}

/// All open leases.
#[derive(Default)]
pub(crate) struct LeaseTable {
    entries: RefCell<HashMap<TurnKey, Rc<LeaseEntry>>>,
}

impl LeaseTable {
    /// How many are open.
    pub(crate) fn len(&self) -> usize {
        self.entries.borrow().len()
    }

    /// The open lease for `context`'s turn key, if any. Few leases are
    /// open at once, so a scan beats building a key to hash.
    pub(crate) fn find(&self, context: &AccessContext) -> Option<Rc<LeaseEntry>> {
        self.entries.borrow().iter().find(|(key, _)| key.matches(context)).map(|(_, entry)| Rc::clone(entry))
    }

    /// Takes one reference, registering a pending lease if none exists.
    pub(crate) fn reserve(&self, key: &TurnKey) -> Rc<LeaseEntry> {
        let entry = Rc::clone(self.entries.borrow_mut().entry(key.clone()).or_default());
        entry.refs.set(entry.refs.get() + 1);
        entry
    }

    /// Drops one reference; the last one removes the lease.
    pub(crate) fn release(&self, key: &TurnKey) {
        let mut entries = self.entries.borrow_mut();
        let remove = match entries.get(key) {
            Some(entry) => {
                let refs = entry.refs.get().saturating_sub(1);
                entry.refs.set(refs);
                refs == 0
            }
            None => false,
        };
        if remove {
            entries.remove(key);
        }
    }
}

/// One opener's reference; released on close, or on drop if the opening
/// never finished (a cancelled opener releases only its own reservation).
pub(crate) struct Reservation {
    pub(crate) table: Rc<LeaseTable>,
    pub(crate) key: TurnKey,
    pub(crate) armed: bool,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.armed {
            self.table.release(&self.key);
        }
    }
}

/// The handle `open_turn_authority` returns.
pub struct LeaseScope {
    pub(crate) table: Rc<LeaseTable>,
    pub(crate) key: TurnKey,
    pub(crate) closed: Cell<bool>,
}

impl TurnScope for LeaseScope {
    fn close(&self) {
        if !self.closed.replace(true) {
            self.table.release(&self.key);
        }
    }
}

/// The authority an operation decides against, and the lease it came from.
pub(crate) struct TurnState {
    pub(crate) authority: Rc<AuthorityResolution>,
    pub(crate) lease: Option<Rc<LeaseEntry>>,
}

impl TurnState {
    /// The catalogue hash the turn published, if it listed.
    pub(crate) fn catalog_hash(&self) -> Option<String> {
        self.lease.as_ref().and_then(|l| l.catalog_hash.borrow().clone())
    }
}

/// Fails with the signal's reason once it fired.
pub(crate) fn check_abort(signal: &AbortSignal) -> Result<(), KernelError> {
    match signal.reason() {
        Some(reason) => Err(KernelError::Aborted(reason)),
        None => Ok(()),
    }
}
