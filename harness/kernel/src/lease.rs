//! Turn leases: a turn's authority (and its tool registry and published
//! catalogue hash) loaded once and shared by every operation with the same
//! turn key, including nested calls from tool handlers (K6, K9).
//!
//! An unavailable resolution is held too, so a turn never changes its mind
//! (K7). Operations without a lease load their own authority (K8).

use crate::kernel::{Core, Kernel};
use crate::lease_table::{check_abort, LeaseScope, Reservation, TurnKey, TurnState};
use crate::ports::{ProviderError, ProviderErrorOrigin, ToolHandler};
use crate::registry::Registry;
use serde_json::{json, Map, Value};
use sharedos_authz::authority::{resolve_authority, resolve_typed_authority, AuthorityResolution, PolicyState};
use sharedos_model::access::AccessContext;
use sharedos_model::audit::{AuditOutcome, AuditType};
use sharedos_model::codes::ReasonCode;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use sharedos_port::turn_kernel::TurnScope;
use std::cell::Cell;
use std::rc::Rc;

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
