//! `listTools` (the permission-filtered catalogue and its
//! `tool.catalog.listed` record) and `reach` (a description of what the
//! turn's authority reaches; never authority itself).

use crate::decision::Ask;
use crate::kernel::Kernel;
use crate::lease_table::check_abort;
use serde::Serialize;
use serde_json::{json, Map, Value};
use sharedos_authz::authority::{AuthorityResolution, PolicyState, ResolvedAuthority};
use sharedos_authz::authorizer::{ChainMemo, Matcher};
use sharedos_model::access::{AccessContext, Reach};
use sharedos_model::audit::{AuditOutcome, AuditType, Source};
use sharedos_model::canonical::tagged_hash;
use sharedos_model::capability::{Capability, Requirement};
use sharedos_model::codes::ReasonCode;
use sharedos_model::tool::{ToolAnnotations, ToolDefinition};
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use std::borrow::Borrow;
use std::sync::Arc;

/// The domain tag of catalogue hashes.
pub const CATALOG_HASH_TAG: &str = "sharedos/catalog/v1";

/// The hash of a published catalogue: over the model-facing projection
/// (`name`, `description`, `inputSchema`, `outputSchema`, `annotations`,
/// `metadata`) of the tools sorted by name. Never over ceilings or handlers.
///
/// # Errors
/// Only when a definition cannot be serialised, which well-formed JSON cannot cause.
pub fn catalog_hash<T: Borrow<ToolDefinition>>(tools: &[T]) -> Result<String, KernelError> {
    /// The model-facing projection of one tool, borrowed from its definition.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Projection<'a> {
        name: &'a str,
        description: &'a str,
        input_schema: &'a Map<String, Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        output_schema: Option<&'a Map<String, Value>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<&'a ToolAnnotations>,
        #[serde(skip_serializing_if = "Option::is_none")]
        metadata: Option<&'a Map<String, Value>>,
    }
    let mut projection: Vec<Projection<'_>> = tools
        .iter()
        .map(Borrow::borrow)
        .map(|tool: &ToolDefinition| Projection {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
            output_schema: tool.output_schema.as_deref(),
            annotations: tool.annotations.as_ref(),
            metadata: tool.metadata.as_ref(),
        })
        .collect();
    projection.sort_by(|a, b| a.name.cmp(b.name));
    tagged_hash(CATALOG_HASH_TAG, &projection).map_err(|e| KernelError::Port(e.to_string()))
}

impl Kernel {
    /// The catalogue `context` may see: registered, namespace enabled, and
    /// discoverable at the declared ceiling (K25).
    ///
    /// # Errors
    /// An abort, a pre-effect audit outage, or a failing tool provider
    /// (never a partial catalogue, K31).
    pub async fn list_tools(
        &self,
        context: &AccessContext,
        signal: &AbortSignal,
    ) -> Result<Vec<Arc<ToolDefinition>>, KernelError> {
        check_abort(signal)?;
        let state = self.turn_state(context, signal).await?;
        let authority = match &*state.authority {
            AuthorityResolution::Resolved(authority) => authority,
            AuthorityResolution::Unavailable(_) => {
                self.record_unavailable_listing(context).await?;
                return Ok(Vec::new());
            }
        };
        let registry = self
            .registry(&state, context, signal)
            .await
            .map_err(|_| KernelError::Port(ReasonCode::ToolCatalogUnavailable.as_str().to_string()))?;
        let mut listed = Vec::new();
        let mut withheld = 0_usize;
        let mut fail_closed = false;
        let memo = ChainMemo::new();
        for handler in registry.handlers() {
            let definition = handler.definition();
            if !context.enabled_tool_namespaces.contains(&definition.namespace) {
                withheld += 1;
                continue;
            }
            let ask = Ask {
                context,
                requirement: &definition.required_capability,
                matcher: Matcher::Discovery,
                consume: false,
                operation_id: None,
            };
            let decision = self.core.decide_in(authority, &ask, &memo);
            if decision.allowed {
                listed.push(Arc::clone(handler.definition()));
            } else {
                withheld += 1;
                fail_closed |= decision.reason_code.is_fail_closed();
            }
        }
        let hash = catalog_hash(&listed)?;
        let mut event = self.core.event(context, AuditType::ToolCatalogListed, AuditOutcome::Succeeded);
        event.authority_hash = Some(authority.snapshot.hash.clone());
        event.source = Some(Source::Kernel);
        if fail_closed {
            event.fail_closed = Some(true);
        }
        event.metadata = Some(listing_metadata(&hash, context, policy_version(authority), withheld));
        self.core.write_pre(event).await?;
        if let Some(lease) = &state.lease {
            *lease.catalog_hash.borrow_mut() = Some(hash);
        }
        Ok(listed)
    }

    /// The denied listing of a turn whose authority is unavailable (K33).
    async fn record_unavailable_listing(&self, context: &AccessContext) -> Result<(), KernelError> {
        let mut event = self.core.event(context, AuditType::ToolCatalogListed, AuditOutcome::Denied);
        event.reason = Some(ReasonCode::AuthorityUnavailable.as_str().to_string());
        event.fail_closed = Some(true);
        event.source = Some(Source::Kernel);
        event.metadata = Some(listing_metadata(&catalog_hash::<ToolDefinition>(&[])?, context, None, 0));
        self.core.write_pre(event).await
    }

    /// What the turn's authority reaches: per grant capability, the actions a
    /// decision would allow now. Descriptive only; the envelope narrows it.
    ///
    /// # Errors
    /// An abort or a pre-effect audit outage while loading authority.
    pub async fn reach(&self, context: &AccessContext, signal: &AbortSignal) -> Result<Reach, KernelError> {
        check_abort(signal)?;
        let state = self.turn_state(context, signal).await?;
        let authority = match &*state.authority {
            AuthorityResolution::Resolved(authority) => authority,
            AuthorityResolution::Unavailable(_) => {
                return Ok(Reach::Unavailable { reason_code: ReasonCode::AuthorityUnavailable.as_str().to_string() });
            }
        };
        Ok(self.compute_reach(context, authority))
    }

    fn compute_reach(&self, context: &AccessContext, authority: &ResolvedAuthority) -> Reach {
        let mut reach = Vec::new();
        let memo = ChainMemo::new();
        for grant in &authority.grants {
            for capability in &grant.capabilities {
                let mut actions = Vec::new();
                // One requirement per capability, its action rewritten per
                // action, rather than a copy of the resource for each.
                let mut requirement = Requirement { resource: capability.resource.clone(), action: String::new() };
                for action in &capability.actions {
                    requirement.action.clone_from(action);
                    let ask = Ask {
                        context,
                        requirement: &requirement,
                        matcher: Matcher::Discovery,
                        consume: false,
                        operation_id: None,
                    };
                    let decision = self.core.decide_in(authority, &ask, &memo);
                    if decision.reason_code == ReasonCode::UsageStoreUnavailable {
                        return Reach::Unavailable { reason_code: decision.reason_code.as_str().to_string() };
                    }
                    if decision.allowed {
                        actions.push(action.clone());
                    }
                }
                if !actions.is_empty() {
                    let mut resource = capability.resource.clone();
                    resource.owner = Some(resource.owner.unwrap_or_else(|| context.owner.clone()));
                    reach.push(Capability { actions, resource, scope: capability.scope });
                }
            }
        }
        Reach::Computed { reach }
    }
}

fn policy_version(authority: &ResolvedAuthority) -> Option<&str> {
    match &authority.policy {
        PolicyState::Loaded { version, .. } => Some(version),
        _ => None,
    }
}

fn listing_metadata(
    hash: &str,
    context: &AccessContext,
    policy_version: Option<&str>,
    withheld: usize,
) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("catalogHash".into(), Value::from(hash));
    metadata.insert("enabledNamespaces".into(), json!(context.enabled_tool_namespaces));
    if let Some(version) = policy_version {
        metadata.insert("hostPolicyVersion".into(), Value::from(version));
    }
    metadata.insert("withheldCount".into(), json!(withheld));
    metadata
}
