//! Turning what a grant source returned into a turn's resolved authority.

use serde_json::Value;
use sharedos_model::access::AccessContext;
use sharedos_model::canonical::{canonical_string, tagged_hash};
use sharedos_model::capability::Grant;
use sharedos_model::validate::{drop_proto_keys, drop_proto_keys_in, holds_proto_keys_in, Validate};
use std::borrow::Borrow;
use std::rc::Rc;

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
    /// Grants in store order, shared with the source that loaded them.
    pub grants: Vec<Rc<Grant>>,
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
    resolution(context, parse_grants(context, loaded), policy)
}

fn resolution(
    context: &AccessContext,
    grants: Result<Vec<Rc<Grant>>, UnavailableCause>,
    policy: PolicyState,
) -> AuthorityResolution {
    match grants {
        Ok(grants) => AuthorityResolution::Resolved(ResolvedAuthority {
            context: context.clone(),
            snapshot: snapshot_of(grants.iter().map(|g| &**g).collect(), &context.now),
            grants,
            policy,
        }),
        Err(cause) => AuthorityResolution::Unavailable(cause),
    }
}

/// [`resolve_authority`] for a source that answered with typed grants
/// (sparing the JSON round trip): the same checks, in the same order, on
/// what parsing the same material would have produced.
#[must_use]
pub fn resolve_typed_authority(
    context: &AccessContext,
    loaded: Result<Vec<Rc<Grant>>, String>,
    policy: PolicyState,
) -> AuthorityResolution {
    let checked = loaded.map_err(|_| UnavailableCause::GrantSourceFailed).and_then(|grants| {
        if grants.len() > MAX_GRANTS {
            return Err(UnavailableCause::GrantLimitExceeded);
        }
        grants.into_iter().map(|grant| check_grant(context, without_proto_keys(grant))).collect()
    });
    resolution(context, checked, policy)
}

/// A typed grant as it would parse after `__proto__` keys were dropped
/// (only its opaque metadata can hold any); copied only when it holds one.
fn without_proto_keys(grant: Rc<Grant>) -> Rc<Grant> {
    if !grant.metadata.as_ref().is_some_and(holds_proto_keys_in) {
        return grant;
    }
    let mut grant = Rc::unwrap_or_clone(grant);
    if let Some(metadata) = &mut grant.metadata {
        drop_proto_keys_in(metadata);
    }
    Rc::new(grant)
}

/// The schema and scope checks every loaded grant passes.
fn check_grant(context: &AccessContext, grant: Rc<Grant>) -> Result<Rc<Grant>, UnavailableCause> {
    grant.validate().map_err(|_| UnavailableCause::InvalidGrantMaterial)?;
    if !in_scope(&grant, context) {
        return Err(UnavailableCause::GrantScopeMismatch);
    }
    Ok(grant)
}

/// The grants of a source answer, or the first reason the whole answer is unusable.
fn parse_grants(context: &AccessContext, loaded: Result<Value, String>) -> Result<Vec<Rc<Grant>>, UnavailableCause> {
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
        grants.push(check_grant(context, Rc::new(grant))?);
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
pub fn snapshot<G: Borrow<Grant>>(grants: &[G], loaded_at: &str) -> AuthoritySnapshot {
    snapshot_of(grants.iter().map(Borrow::borrow).collect(), loaded_at)
}

/// [`snapshot`] of grants borrowed in any order.
fn snapshot_of(mut ordered: Vec<&Grant>, loaded_at: &str) -> AuthoritySnapshot {
    // Sorted by id, with each grant's canonical text breaking ties, so even a
    // set holding duplicate ids hashes the same in every order. Unique ids
    // (the usual case) already decide the order, so the text is only
    // computed when two grants share an id.
    let grant_count = ordered.len();
    ordered.sort_by(|a, b| a.id.cmp(&b.id));
    if ordered.windows(2).any(|pair| pair[0].id == pair[1].id) {
        let mut keyed: Vec<(String, &Grant)> =
            ordered.iter().map(|g| (canonical_string(g).unwrap_or_default(), *g)).collect();
        keyed.sort_by(|a, b| (a.1.id.as_str(), &a.0).cmp(&(b.1.id.as_str(), &b.0)));
        ordered = keyed.into_iter().map(|(_, g)| g).collect();
    }
    // A grant holds only strings, integers and JSON values, all of which have
    // a canonical form, so the hash cannot fail in practice.
    let hash = tagged_hash(SNAPSHOT_TAG, &ordered).unwrap_or_default();
    let grant_ids: Vec<String> = ordered.iter().map(|g| g.id.clone()).collect();
    AuthoritySnapshot { hash, grant_ids, grant_count, loaded_at: loaded_at.to_string() }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use sharedos_model::address::Address;
    use sharedos_model::capability::{Capability, Constraints, ResourceRef, Scope};

    fn context() -> AccessContext {
        AccessContext {
            namespace_id: "world-a".into(),
            actor: Address::agent("agent-mallory"),
            authority: Address::agent("agent-orchestrator"),
            owner: Address::human("user-alice"),
            purpose: "probe".into(),
            trace_id: "trace-1".into(),
            enabled_tool_namespaces: vec!["files".into()],
            now: "2026-08-18T09:00:00.000Z".into(),
            turn_id: None,
        }
    }

    fn grant(id: &str) -> Grant {
        Grant {
            id: id.into(),
            namespace_id: "world-a".into(),
            subject: Address::agent("agent-mallory"),
            issuer: Address::agent("agent-orchestrator"),
            capabilities: vec![Capability {
                resource: ResourceRef { namespace: "files".into(), path: vec!["Workspace".into()], owner: None },
                actions: vec!["read".into()],
                scope: Scope::Descendants,
            }],
            constraints: Constraints::default(),
            issued_at: "2026-08-18T08:00:00.000Z".into(),
            revoked_at: None,
            parent_grant_id: None,
            metadata: None,
        }
    }

    /// Both ways of loading the same grants resolve to the same thing.
    fn both(grants: Vec<Grant>) -> (AuthorityResolution, AuthorityResolution) {
        let json = resolve_authority(&context(), Ok(serde_json::to_value(&grants).unwrap()), PolicyState::Absent);
        let typed = grants.into_iter().map(Rc::new).collect();
        (json, resolve_typed_authority(&context(), Ok(typed), PolicyState::Absent))
    }

    #[test]
    fn typed_grants_resolve_exactly_as_their_json_material() {
        let mut with_proto = grant("grant-b");
        let metadata = json!({"__proto__": {"x": 1}, "note": {"__proto__": 2, "kept": [{"__proto__": 3}]}});
        with_proto.metadata = metadata.as_object().cloned();
        let (json, typed) = both(vec![with_proto, grant("grant-a")]);
        assert!(matches!(typed, AuthorityResolution::Resolved(_)));
        assert_eq!(json, typed);
        let mut foreign = grant("grant-c");
        foreign.namespace_id = "world-b".into();
        assert_eq!(
            both(vec![grant("grant-a"), foreign]),
            (
                AuthorityResolution::Unavailable(UnavailableCause::GrantScopeMismatch),
                AuthorityResolution::Unavailable(UnavailableCause::GrantScopeMismatch)
            )
        );
        let mut malformed = grant("grant-d");
        malformed.capabilities.clear();
        let (json, typed) = both(vec![malformed]);
        assert_eq!(json, AuthorityResolution::Unavailable(UnavailableCause::InvalidGrantMaterial));
        assert_eq!(json, typed);
        let (json, typed) = both((0..=MAX_GRANTS).map(|i| grant(&format!("grant-{i}"))).collect());
        assert_eq!(json, AuthorityResolution::Unavailable(UnavailableCause::GrantLimitExceeded));
        assert_eq!(json, typed);
        // The limit itself is allowed: 256 grants resolve, on both paths.
        let (json, typed) = both((0..MAX_GRANTS).map(|i| grant(&format!("grant-{i}"))).collect());
        assert!(matches!(&json, AuthorityResolution::Resolved(r) if r.grants.len() == MAX_GRANTS), "{json:?}");
        assert_eq!(json, typed);
        assert_eq!(
            resolve_typed_authority(&context(), Err("down".into()), PolicyState::Absent),
            AuthorityResolution::Unavailable(UnavailableCause::GrantSourceFailed)
        );
    }
}
