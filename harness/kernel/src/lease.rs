//! Turn leases: a turn's authority (and its tool registry and published
//! catalogue hash) loaded once and shared by every operation with the same
//! turn key, including nested calls from tool handlers (K6, K9).
//!
//! An unavailable resolution is held too, so a turn never changes its mind
//! (K7). Operations without a lease load their own authority (K8).

use crate::kernel::{Core, Kernel};
use crate::registry::Registry;
use serde_json::{json, Map, Value};
use sharedos_authz::authority::{resolve_authority, resolve_typed_authority, AuthorityResolution, PolicyState};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::audit::{AuditOutcome, AuditType};
use sharedos_model::codes::ReasonCode;
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
    fn reserve(&self, key: &TurnKey) -> Rc<LeaseEntry> {
        let entry = Rc::clone(self.entries.borrow_mut().entry(key.clone()).or_default());
        entry.refs.set(entry.refs.get() + 1);
        entry
    }

    /// Drops one reference; the last one removes the lease.
    fn release(&self, key: &TurnKey) {
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
struct Reservation {
    table: Rc<LeaseTable>,
    key: TurnKey,
    armed: bool,
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
    table: Rc<LeaseTable>,
    key: TurnKey,
    closed: Cell<bool>,
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

impl Kernel {
    /// Opens (or joins) the lease for `context`'s turn key.
    pub(crate) async fn open_lease(
        &self,
        context: &AccessContext,
        signal: &AbortSignal,
    ) -> Result<Rc<dyn TurnScope>, KernelError> {
        check_abort(signal)?;
        let key = TurnKey::of(context);
        let entry = self.leases.reserve(&key);
        let mut reservation = Reservation { table: Rc::clone(&self.leases), key: key.clone(), armed: true };
        let core = &self.core;
        entry.authority.get_or_try_init(|| load_authority(core, context, signal)).await?;
        reservation.armed = false;
        Ok(Rc::new(LeaseScope { table: Rc::clone(&self.leases), key, closed: Cell::new(false) }))
    }

    /// The authority for an operation: from the open lease, or loaded now.
    pub(crate) async fn turn_state(
        &self,
        context: &AccessContext,
        signal: &AbortSignal,
    ) -> Result<TurnState, KernelError> {
        if let Some(entry) = self.leases.find(context) {
            let core = &self.core;
            let authority = Rc::clone(entry.authority.get_or_try_init(|| load_authority(core, context, signal)).await?);
            return Ok(TurnState { authority, lease: Some(entry) });
        }
        let authority = load_authority(&self.core, context, signal).await?;
        Ok(TurnState { authority, lease: None })
    }
}

/// What the grant source answered, as JSON material or as typed grants.
enum Loaded {
    Json(Result<Value, String>),
    Typed(Result<Vec<Rc<sharedos_model::capability::Grant>>, String>),
}

/// Loads grants and policy together, resolves them, and writes the one
/// `authority.resolved` record (pre-effect).
async fn load_authority(
    core: &Core,
    context: &AccessContext,
    signal: &AbortSignal,
) -> Result<Rc<AuthorityResolution>, KernelError> {
    check_abort(signal)?;
    let grants = async {
        match core.grant_source.load_typed(context, signal) {
            Some(typed) => Loaded::Typed(typed.await),
            None => Loaded::Json(core.grant_source.load(context, signal).await),
        }
    };
    let policy = async {
        match &core.policy_source {
            None => PolicyState::Absent,
            Some(source) => match source.load(context, signal).await {
                Ok((policy, version)) if !version.trim().is_empty() => PolicyState::Loaded { policy, version },
                _ => PolicyState::Unavailable,
            },
        }
    };
    let (loaded, policy) = futures::join!(grants, policy);
    check_abort(signal)?;
    let resolution = match loaded {
        Loaded::Json(material) => resolve_authority(context, material, policy),
        Loaded::Typed(grants) => resolve_typed_authority(context, grants, policy),
    };
    core.write_pre(resolved_event(core, context, &resolution)).await?;
    Ok(Rc::new(resolution))
}

fn resolved_event(
    core: &Core,
    context: &AccessContext,
    resolution: &AuthorityResolution,
) -> sharedos_model::audit::AuditEvent {
    let mut metadata = Map::new();
    match resolution {
        AuthorityResolution::Resolved(authority) => {
            let mut event = core.event(context, AuditType::AuthorityResolved, AuditOutcome::Succeeded);
            event.authority_hash = Some(authority.snapshot.hash.clone());
            metadata.insert("grantIds".into(), json!(authority.snapshot.grant_ids));
            metadata.insert("grantCount".into(), json!(authority.snapshot.grant_count));
            let ceiling = if core.authorizer.ceiling.is_some() { "installed" } else { "absent" };
            metadata.insert("hostCeiling".into(), Value::from(ceiling));
            let policy = match authority.policy {
                PolicyState::Absent => "absent",
                PolicyState::Loaded { .. } => "loaded",
                PolicyState::Unavailable => "unavailable",
            };
            metadata.insert("hostPolicy".into(), Value::from(policy));
            event.metadata = Some(metadata);
            event
        }
        AuthorityResolution::Unavailable(cause) => {
            let mut event = core.event(context, AuditType::AuthorityResolved, AuditOutcome::Failed);
            event.reason = Some(ReasonCode::AuthorityUnavailable.as_str().to_string());
            event.fail_closed = Some(true);
            metadata.insert("authority".into(), Value::from(cause.as_str()));
            event.metadata = Some(metadata);
            event
        }
    }
}
