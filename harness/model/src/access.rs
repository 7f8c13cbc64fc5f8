//! The trusted, host-built access context and the narrower view a runtime sees.

use crate::address::Address;
use crate::capability::Capability;
use crate::validate::{self, Validate, ValidationError};
use serde::{Deserialize, Serialize};

/// Who acts, under whose authority, over whose resources, for what purpose.
/// It carries no grants: authority is loaded by the kernel, never passed in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccessContext {
    /// The world (tenant) this operation belongs to.
    pub namespace_id: String,
    /// The principal attempting the operation (must be a grant's subject).
    pub actor: Address,
    /// Whose issued grants are exercised (must be a grant's issuer).
    pub authority: Address,
    /// Whose resources are accessed by default.
    pub owner: Address,
    /// The single host-bound purpose.
    pub purpose: String,
    /// Trace id; part of a turn's identity.
    pub trace_id: String,
    /// Tool namespaces switched on for this context; empty means none.
    pub enabled_tool_namespaces: Vec<String>,
    /// The instant of this operation.
    pub now: String,
    /// Trusted per-execution id, part of the turn lease key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
}

impl AccessContext {
    /// The same context stamped at another instant.
    #[must_use]
    pub fn at(&self, now: &str) -> AccessContext {
        AccessContext { now: now.to_string(), ..self.clone() }
    }
}

impl Validate for AccessContext {
    fn validate_at(&self, p: &str) -> Result<(), ValidationError> {
        validate::within(p, "namespaceId", |at| validate::identifier(&self.namespace_id, at))?;
        validate::within(p, "purpose", |at| validate::bounded_text(&self.purpose, 512, at))?;
        validate::within(p, "traceId", |at| validate::identifier(&self.trace_id, at))?;
        validate::within(p, "enabledToolNamespaces", |namespaces| {
            validate::length(self.enabled_tool_namespaces.len(), 0, 256, namespaces)?;
            validate::unique(&self.enabled_tool_namespaces, namespaces)?;
            for (i, ns) in self.enabled_tool_namespaces.iter().enumerate() {
                validate::within_index(namespaces, i, |at| validate::identifier(ns, at))?;
            }
            Ok(())
        })?;
        validate::within(p, "now", |at| validate::timestamp(&self.now, at))?;
        if let Some(turn_id) = &self.turn_id {
            validate::within(p, "turnId", |at| validate::identifier(turn_id, at))?;
        }
        Ok(())
    }
}

/// What a runtime is shown of the context: no `authority`, no enabled
/// namespaces, nothing grant-shaped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeVisibleContext {
    /// The acting principal.
    pub actor: Address,
    /// The resource owner.
    pub owner: Address,
    /// The world.
    pub namespace_id: String,
    /// The purpose.
    pub purpose: String,
    /// The trace id.
    pub trace_id: String,
    /// The envelope's clock at turn opening.
    pub now: String,
    /// Descriptive reach (never authority).
    pub reach: Reach,
}

/// The kernel's description of what a turn can reach; descriptive only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase", deny_unknown_fields)]
pub enum Reach {
    /// Reach computed from the turn's authority, narrowed to the catalogue.
    Computed {
        /// Reachable entries: a resource (its owner resolved), the actions a
        /// decision would allow on it now, and its scope.
        reach: Vec<Capability>,
    },
    /// Reach could not be computed; the reason is passed through.
    Unavailable {
        /// Why (`authority_unavailable`, `usage_store_unavailable`).
        #[serde(rename = "reasonCode")]
        reason_code: String,
    },
}
