//! Turning what a grant source returned into a turn's resolved authority.

use sharedos_model::access::AccessContext;
use sharedos_model::capability::Grant;
use serde_json::Value;

/// Most grants one authority resolution may hold.
pub const MAX_GRANTS: usize = 256;

/// Order-independent identity of a grant set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthoritySnapshot {
    /// SHA-256 over the canonical, sorted grant set.
    pub hash: String,
    /// Grant ids, sorted.
    pub grant_ids: Vec<String>,
    /// How many grants.
    pub grant_count: usize,
    /// When they were loaded.
    pub loaded_at: String,
}

/// The state of the turn's host policy.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyState {
    /// No policy source installed.
    Absent,
    /// Loaded once for the turn.
    Loaded {
        /// Opaque policy.
        policy: Value,
        /// Non-empty version, recorded on listings.
        version: String,
    },
    /// The policy source failed; every ceiling decision is refused.
    Unavailable,
}

/// Authority held beside a context; never handed to a runtime, tool or transport.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedAuthority {
    /// The context at admission.
    pub context: AccessContext,
    /// Grants in store order.
    pub grants: Vec<Grant>,
    /// Their identity.
    pub snapshot: AuthoritySnapshot,
    /// Host policy for the turn.
    pub policy: PolicyState,
}

/// Why authority could not be resolved (audit-only sub-codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnavailableCause {
    /// The grant source threw.
    GrantSourceFailed,
    /// Not an array, or a grant failed the schema.
    InvalidGrantMaterial,
    /// A grant outside (namespace, actor as subject, authority as issuer).
    GrantScopeMismatch,
    /// More than 256 grants.
    GrantLimitExceeded,
}

impl UnavailableCause {
    /// The audit spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            UnavailableCause::GrantSourceFailed => "grant_source_failed",
            UnavailableCause::InvalidGrantMaterial => "invalid_grant_material",
            UnavailableCause::GrantScopeMismatch => "grant_scope_mismatch",
            UnavailableCause::GrantLimitExceeded => "grant_limit_exceeded",
        }
    }
}

/// The outcome of loading a turn's authority.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthorityResolution {
    /// Usable authority.
    Resolved(ResolvedAuthority),
    /// Fail-closed for the whole turn.
    Unavailable(UnavailableCause),
}

/// Resolves what a grant source returned (`Err` when it threw) into authority
/// for `context`: all-or-nothing, never filtered (K4).
#[must_use]
pub fn resolve_authority(context: &AccessContext, loaded: Result<Value, String>, policy: PolicyState) -> AuthorityResolution {
    let _ = (context, loaded, policy);
    todo!("resolve_authority")
}

/// The snapshot identity of a grant set, independent of order (K10).
#[must_use]
pub fn snapshot(grants: &[Grant], loaded_at: &str) -> AuthoritySnapshot {
    let _ = (grants, loaded_at);
    todo!("snapshot")
}
