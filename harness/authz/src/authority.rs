//! Turning what a grant source returned into a turn's resolved authority.

use serde_json::Value;
use sharedos_model::access::AccessContext;
use sharedos_model::canonical::{canonical_string, tagged_hash};
use sharedos_model::capability::Grant;
use sharedos_model::validate::{drop_proto_keys, Validate};

/// Domain tag of the authority snapshot hash.
pub const SNAPSHOT_TAG: &str = "sharedos-conformance/authority-snapshot/v1";

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
// Held once per turn, so the size of the resolved variant costs nothing.
#[allow(clippy::large_enum_variant)]
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
pub fn resolve_authority(
    context: &AccessContext,
    loaded: Result<Value, String>,
    policy: PolicyState,
) -> AuthorityResolution {
    match parse_grants(context, loaded) {
        Ok(grants) => AuthorityResolution::Resolved(ResolvedAuthority {
            context: context.clone(),
            snapshot: snapshot(&grants, &context.now),
            grants,
            policy,
        }),
        Err(cause) => AuthorityResolution::Unavailable(cause),
    }
}

/// The grants of a source answer, or the first reason the whole answer is unusable.
fn parse_grants(context: &AccessContext, loaded: Result<Value, String>) -> Result<Vec<Grant>, UnavailableCause> {
    let items = match loaded {
        Err(_) => return Err(UnavailableCause::GrantSourceFailed),
        Ok(Value::Array(items)) => items,
        Ok(_) => return Err(UnavailableCause::InvalidGrantMaterial),
    };
    if items.len() > MAX_GRANTS {
        return Err(UnavailableCause::GrantLimitExceeded);
    }
    let mut grants = Vec::with_capacity(items.len());
    for mut item in items {
        drop_proto_keys(&mut item);
        let grant: Grant = serde_json::from_value(item).map_err(|_| UnavailableCause::InvalidGrantMaterial)?;
        grant.validate().map_err(|_| UnavailableCause::InvalidGrantMaterial)?;
        if !in_scope(&grant, context) {
            return Err(UnavailableCause::GrantScopeMismatch);
        }
        grants.push(grant);
    }
    Ok(grants)
}

/// True when the grant is exactly what the source was asked for: this world,
/// issued by the context's authority to the context's actor.
fn in_scope(grant: &Grant, context: &AccessContext) -> bool {
    grant.namespace_id == context.namespace_id && grant.subject == context.actor && grant.issuer == context.authority
}

/// The snapshot identity of a grant set, independent of order (K10).
#[must_use]
pub fn snapshot(grants: &[Grant], loaded_at: &str) -> AuthoritySnapshot {
    // Sorted by id, with each grant's canonical text breaking ties, so even a
    // set holding duplicate ids hashes the same in every order.
    let mut sorted: Vec<(&str, String, &Grant)> =
        grants.iter().map(|g| (g.id.as_str(), canonical_string(g).unwrap_or_default(), g)).collect();
    sorted.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let ordered: Vec<&Grant> = sorted.iter().map(|(_, _, g)| *g).collect();
    // A grant holds only strings, integers and JSON values, all of which have
    // a canonical form, so the hash cannot fail in practice.
    let hash = tagged_hash(SNAPSHOT_TAG, &ordered).unwrap_or_default();
    let mut grant_ids: Vec<String> = grants.iter().map(|g| g.id.clone()).collect();
    grant_ids.sort();
    AuthoritySnapshot { hash, grant_ids, grant_count: grants.len(), loaded_at: loaded_at.to_string() }
}
