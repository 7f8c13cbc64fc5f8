//! The stores the authorizer consults. Each can fail; a failure is reported,
//! never papered over.

use serde_json::{Map, Value};
use sharedos_model::access::AccessContext;
use sharedos_model::capability::{Decision, Grant, Requirement};
use std::rc::Rc;

/// A store that did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("reach the {store} store: {detail}")]
pub struct StoreError {
    /// Which store.
    pub store: &'static str,
    /// What went wrong (never shown to a runtime or written to audit).
    pub detail: String,
}

/// Counts uses of bounded grants (legacy counter semantics).
pub trait UsageStore {
    /// Uses spent so far.
    ///
    /// # Errors
    /// When the store cannot be read.
    fn get_usage(&self, namespace_id: &str, grant_id: &str) -> Result<u64, StoreError>;

    /// Spends one use if fewer than `max_uses` are spent; `Ok(false)` when none is left.
    ///
    /// # Errors
    /// When the store cannot be written.
    fn try_consume(&self, namespace_id: &str, grant_id: &str, max_uses: u64) -> Result<bool, StoreError>;
}

/// Trusted source of ancestor grants for delegation chains.
pub trait DelegationResolver {
    /// The grant `grant_id` in `namespace_id`, or `None` when there is none.
    ///
    /// # Errors
    /// When the resolver cannot answer (it must fail rather than return stale data).
    fn resolve(&self, namespace_id: &str, grant_id: &str) -> Result<Option<Grant>, StoreError>;

    /// [`DelegationResolver::resolve`], shared rather than copied: a resolver
    /// that keeps its grants behind `Rc` answers without a deep copy.
    ///
    /// # Errors
    /// As [`DelegationResolver::resolve`].
    fn resolve_shared(&self, namespace_id: &str, grant_id: &str) -> Result<Option<Rc<Grant>>, StoreError> {
        self.resolve(namespace_id, grant_id).map(|grant| grant.map(Rc::new))
    }
}

/// Optional extra check of a grant's integrity.
pub trait GrantVerifier {
    /// Whether the grant verifies.
    ///
    /// # Errors
    /// When verification could not run (treated as not verified).
    fn verify(&self, grant: &Grant) -> Result<bool, StoreError>;
}

/// A host ceiling's answer about one allowed decision.
// Returned by value once per consulted grant; boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum CeilingVerdict {
    /// Let the decision stand (it must name the same grant).
    Allow(Decision),
    /// Refuse; rewritten to `host_policy_denied` with this metadata.
    Deny(Option<Map<String, Value>>),
    /// The ceiling malfunctioned (threw, or answered something that is not a verdict).
    Malfunction,
}

/// A host product-policy port that can only narrow what grants allow.
pub trait HostCeiling {
    /// Narrows one allowed decision for `requirement` in `context`.
    fn narrow(
        &self,
        allowed: &Decision,
        requirement: &Requirement,
        context: &AccessContext,
        policy: Option<&Value>,
    ) -> CeilingVerdict;
}
