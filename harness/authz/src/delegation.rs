//! Delegation: validating a derived grant's ancestor chain at use, and
//! deriving a narrower grant at issue (K51–K61).
//!
//! `parentGrantId` is only a claim. Ancestors come from a trusted resolver,
//! never from the request or the actor's own grants, and anything the
//! resolver cannot establish is `unverified`, never valid.

use crate::activity::{is_active, Instants};
use crate::matching::{all_within, capability_within_in_any_context};
use crate::ports::DelegationResolver;
use serde_json::{Map, Value};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Capability, Constraints, Grant};
use sharedos_model::instant::Instant;
use sharedos_model::validate::Validate;
use std::rc::Rc;

/// Most ancestor links walked before a chain is refused as too long.
pub const MAX_CHAIN_LINKS: usize = 16;

/// A rule a resolved chain broke (`delegation_chain_invalid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidCode {
    /// Parent and child live in different namespaces.
    NamespaceMismatch,
    /// The child's issuer is not the parent's subject.
    IssuerNotParentSubject,
    /// The parent is not active for the purpose at the decision's instants.
    ParentInactive,
    /// The parent declares no delegation depth of at least one.
    DelegationNotPermitted,
    /// The child's depth is not strictly below the parent's.
    DelegationDepthExceeded,
    /// The parent is bounded by `maxUses`, which would multiply across children.
    BoundedParentNotDelegable,
    /// A child capability is not inside any single parent capability.
    CapabilityWidened,
    /// The child's window or purposes are wider than the parent's, or it predates the parent.
    ConstraintsWidened,
    /// An ancestor repeats.
    ChainCycle,
    /// More links than allowed.
    ChainTooLong,
}

impl InvalidCode {
    /// The audit spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            InvalidCode::NamespaceMismatch => "namespace_mismatch",
            InvalidCode::IssuerNotParentSubject => "issuer_not_parent_subject",
            InvalidCode::ParentInactive => "parent_inactive",
            InvalidCode::DelegationNotPermitted => "delegation_not_permitted",
            InvalidCode::DelegationDepthExceeded => "delegation_depth_exceeded",
            InvalidCode::BoundedParentNotDelegable => "bounded_parent_not_delegable",
            InvalidCode::CapabilityWidened => "capability_widened",
            InvalidCode::ConstraintsWidened => "constraints_widened",
            InvalidCode::ChainCycle => "chain_cycle",
            InvalidCode::ChainTooLong => "chain_too_long",
        }
    }
}

/// Why a chain could not be established (`delegation_chain_unverified`, fail-closed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnverifiedCode {
    /// No resolver is installed.
    ResolverUnavailable,
    /// The resolver knows no such parent.
    ParentNotFound,
    /// The resolver failed, or answered with a grant other than the one asked for.
    ResolverFailed,
}

impl UnverifiedCode {
    /// The audit spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            UnverifiedCode::ResolverUnavailable => "resolver_unavailable",
            UnverifiedCode::ParentNotFound => "parent_not_found",
            UnverifiedCode::ResolverFailed => "resolver_failed",
        }
    }
}

/// The verdict on one grant's ancestor chain.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum ChainVerdict {
    /// Every link holds (a root grant is trivially valid).
    Valid {
        /// Ancestor ids, nearest first.
        chain: Vec<String>,
    },
    /// The chain resolved and broke a rule.
    Invalid {
        /// Which rule.
        code: InvalidCode,
        /// The failing parent (cycle: the repeated id; too long: the child).
        grant_id: String,
    },
    /// The chain could not be established.
    Unverified {
        /// Why.
        code: UnverifiedCode,
        /// The child whose parent could not be loaded.
        grant_id: String,
    },
}

fn invalid(code: InvalidCode, grant_id: &str) -> ChainVerdict {
    ChainVerdict::Invalid { code, grant_id: grant_id.to_string() }
}

fn unverified(code: UnverifiedCode, grant_id: &str) -> ChainVerdict {
    ChainVerdict::Unverified { code, grant_id: grant_id.to_string() }
}

/// Walks `grant`'s ancestors through `resolver`, checking every link for
/// `context`'s purpose at the decision's two instants.
pub fn validate_chain(
    grant: &Grant,
    context: &AccessContext,
    at: Instants,
    resolver: Option<&dyn DelegationResolver>,
    max_links: usize,
) -> ChainVerdict {
    // Ancestors, nearest first; each link's child is the previous one.
    let mut ancestors: Vec<Rc<Grant>> = Vec::new();
    loop {
        let child: &Grant = ancestors.last().map_or(grant, |g| g);
        let Some(parent_id) = child.parent_grant_id.as_deref() else {
            break;
        };
        let Some(resolver) = resolver else {
            return unverified(UnverifiedCode::ResolverUnavailable, &child.id);
        };
        if ancestors.len() >= max_links {
            return invalid(InvalidCode::ChainTooLong, &child.id);
        }
        let parent = match resolver.resolve_shared(&child.namespace_id, parent_id) {
            Err(_) => return unverified(UnverifiedCode::ResolverFailed, &child.id),
            Ok(None) => return unverified(UnverifiedCode::ParentNotFound, &child.id),
            // A resolver answering with another grant is as untrustworthy as one that failed.
            Ok(Some(parent)) if parent.id != parent_id => return unverified(UnverifiedCode::ResolverFailed, &child.id),
            Ok(Some(parent)) => parent,
        };
        if parent.id == grant.id || ancestors.iter().any(|seen| seen.id == parent.id) {
            return invalid(InvalidCode::ChainCycle, &parent.id);
        }
        if let Some(code) = link_violation(child, &parent, context, at) {
            return invalid(code, &parent.id);
        }
        ancestors.push(parent);
    }
    ChainVerdict::Valid { chain: ancestors.iter().map(|g| g.id.clone()).collect() }
}

/// The first rule the link (child, parent) breaks, in the fixed order.
fn link_violation(child: &Grant, parent: &Grant, context: &AccessContext, at: Instants) -> Option<InvalidCode> {
    let parent_depth = parent.constraints.delegation_depth.unwrap_or(0);
    if parent.namespace_id != child.namespace_id {
        Some(InvalidCode::NamespaceMismatch)
    } else if child.issuer != parent.subject {
        Some(InvalidCode::IssuerNotParentSubject)
    } else if !is_active(parent, &context.purpose, at) {
        Some(InvalidCode::ParentInactive)
    } else if parent_depth < 1 {
        Some(InvalidCode::DelegationNotPermitted)
    } else if child.constraints.delegation_depth.unwrap_or(0) > parent_depth - 1 {
        Some(InvalidCode::DelegationDepthExceeded)
    } else if parent.constraints.max_uses.is_some() {
        Some(InvalidCode::BoundedParentNotDelegable)
    } else if !all_within(&child.capabilities, &parent.capabilities, context) {
        Some(InvalidCode::CapabilityWidened)
    } else if !constraints_attenuated(child, parent) {
        Some(InvalidCode::ConstraintsWidened)
    } else {
        None
    }
}

/// True when the child's window and purposes sit inside the parent's; an
/// omitted constraint where the parent has one counts as widening.
fn constraints_attenuated(child: &Grant, parent: &Grant) -> bool {
    let (Some(child_issued), Some(parent_issued)) =
        (Instant::parse(&child.issued_at), Instant::parse(&parent.issued_at))
    else {
        return false;
    };
    if child_issued < parent_issued {
        return false;
    }
    let (c, p) = (&child.constraints, &parent.constraints);
    if let Some(parent_expiry) = p.expires_at.as_deref() {
        let child_expiry = c.expires_at.as_deref().and_then(Instant::parse);
        match (Instant::parse(parent_expiry), child_expiry) {
            (Some(pe), Some(ce)) if ce <= pe => {}
            _ => return false,
        }
    }
    if let Some(parent_start) = p.not_before.as_deref() {
        let child_start = Instant::parse(c.not_before.as_deref().unwrap_or(&child.issued_at));
        match (Instant::parse(parent_start), child_start) {
            (Some(ps), Some(cs)) if cs >= ps => {}
            _ => return false,
        }
    }
    if let Some(parent_purposes) = &p.purposes {
        match &c.purposes {
            Some(purposes) if purposes.iter().all(|x| parent_purposes.contains(x)) => {}
            _ => return false,
        }
    }
    true
}

/// What a delegator asks to pass on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeriveRequest {
    /// The derived grant's id (must differ from the parent's).
    pub id: String,
    /// Who receives it.
    pub subject: Address,
    /// What it carries; each must fit inside one parent capability.
    pub capabilities: Vec<Capability>,
    /// Requested limits; omitted window, purposes and depth are inherited.
    pub constraints: Constraints,
    /// When it is issued.
    pub issued_at: String,
    /// Host-side data.
    pub metadata: Option<Map<String, Value>>,
}

/// Why a derivation was refused (never clamped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeriveRefusal {
    /// No capabilities asked for.
    EmptyCapabilities,
    /// The child would carry the parent's id.
    IdCollidesWithParent,
    /// The parent is bounded by `maxUses`.
    BoundedParentNotDelegable,
    /// The parent has no delegation depth left (absent or zero).
    ParentNotDelegable,
    /// The requested depth is not below the parent's.
    DepthExhausted,
    /// A capability does not fit inside one parent capability in every context.
    CapabilityNotWithinParent,
    /// A purpose the parent does not list.
    PurposeNotWithinParent,
    /// A window starting earlier or ending later than the parent's, or unparsable.
    WindowNotWithinParent,
    /// Issued before the parent (or an unparsable issue instant).
    IssuedBeforeParent,
    /// The derived grant would break the grant schema (e.g. an empty window).
    MalformedChild,
}

impl DeriveRefusal {
    /// The spelling used in reports.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DeriveRefusal::EmptyCapabilities => "empty_capabilities",
            DeriveRefusal::IdCollidesWithParent => "id_collides_with_parent",
            DeriveRefusal::BoundedParentNotDelegable => "bounded_parent_not_delegable",
            DeriveRefusal::ParentNotDelegable => "parent_not_delegable",
            DeriveRefusal::DepthExhausted => "depth_exhausted",
            DeriveRefusal::CapabilityNotWithinParent => "capability_not_within_parent",
            DeriveRefusal::PurposeNotWithinParent => "purpose_not_within_parent",
            DeriveRefusal::WindowNotWithinParent => "window_not_within_parent",
            DeriveRefusal::IssuedBeforeParent => "issued_before_parent",
            DeriveRefusal::MalformedChild => "malformed_child",
        }
    }
}

/// Derives a grant narrower than `parent`, issued by the parent's subject.
///
/// # Errors
/// The first rule the request breaks; nothing is ever silently narrowed.
pub fn derive_grant(parent: &Grant, request: &DeriveRequest) -> Result<Grant, DeriveRefusal> {
    let depth = check_delegable(parent, request)?;
    let asked = &request.constraints;
    let capabilities_fit =
        request.capabilities.iter().all(|c| parent.capabilities.iter().any(|p| capability_within_in_any_context(c, p)));
    if !capabilities_fit {
        return Err(DeriveRefusal::CapabilityNotWithinParent);
    }
    if let (Some(mine), Some(theirs)) = (&asked.purposes, &parent.constraints.purposes) {
        if !mine.iter().all(|p| theirs.contains(p)) {
            return Err(DeriveRefusal::PurposeNotWithinParent);
        }
    }
    if !window_within(&parent.constraints, asked) {
        return Err(DeriveRefusal::WindowNotWithinParent);
    }
    match (Instant::parse(&request.issued_at), Instant::parse(&parent.issued_at)) {
        (Some(child), Some(theirs)) if child >= theirs => {}
        _ => return Err(DeriveRefusal::IssuedBeforeParent),
    }
    let inherited = &parent.constraints;
    let child = Grant {
        id: request.id.clone(),
        namespace_id: parent.namespace_id.clone(),
        subject: request.subject.clone(),
        issuer: parent.subject.clone(),
        capabilities: request.capabilities.clone(),
        constraints: Constraints {
            purposes: asked.purposes.clone().or_else(|| inherited.purposes.clone()),
            not_before: asked.not_before.clone().or_else(|| inherited.not_before.clone()),
            expires_at: asked.expires_at.clone().or_else(|| inherited.expires_at.clone()),
            max_uses: asked.max_uses,
            delegation_depth: Some(depth),
        },
        issued_at: request.issued_at.clone(),
        revoked_at: None,
        parent_grant_id: Some(parent.id.clone()),
        metadata: request.metadata.clone(),
    };
    child.validate().map_err(|_| DeriveRefusal::MalformedChild)?;
    Ok(child)
}

/// The structural preconditions; answers the child's delegation depth.
fn check_delegable(parent: &Grant, request: &DeriveRequest) -> Result<u64, DeriveRefusal> {
    if request.capabilities.is_empty() {
        return Err(DeriveRefusal::EmptyCapabilities);
    }
    if request.id == parent.id {
        return Err(DeriveRefusal::IdCollidesWithParent);
    }
    if parent.constraints.max_uses.is_some() {
        return Err(DeriveRefusal::BoundedParentNotDelegable);
    }
    let remaining = match parent.constraints.delegation_depth {
        Some(depth) if depth >= 1 => depth - 1,
        _ => return Err(DeriveRefusal::ParentNotDelegable),
    };
    match request.constraints.delegation_depth {
        Some(asked) if asked > remaining => Err(DeriveRefusal::DepthExhausted),
        Some(asked) => Ok(asked),
        None => Ok(remaining),
    }
}

/// True when an explicitly requested window starts no earlier and ends no
/// later than the parent's; omitted bounds are inherited, so they cannot widen.
fn window_within(parent: &Constraints, asked: &Constraints) -> bool {
    let bound = |text: Option<&str>| text.map(Instant::parse);
    let (child_start, child_end) = (bound(asked.not_before.as_deref()), bound(asked.expires_at.as_deref()));
    if child_start == Some(None) || child_end == Some(None) {
        return false;
    }
    let parent_start = parent.not_before.as_deref().and_then(Instant::parse);
    let parent_end = parent.expires_at.as_deref().and_then(Instant::parse);
    let starts_early = matches!((child_start.flatten(), parent_start), (Some(c), Some(p)) if c < p);
    let ends_late = matches!((child_end.flatten(), parent_end), (Some(c), Some(p)) if c > p);
    !starts_early && !ends_late
}

#[cfg(test)]
mod tests {
    use super::DeriveRefusal;

    /// The spellings reports carry are part of the contract, and distinct.
    #[test]
    fn every_derive_refusal_has_its_own_spelling() {
        let spellings = [
            (DeriveRefusal::EmptyCapabilities, "empty_capabilities"),
            (DeriveRefusal::IdCollidesWithParent, "id_collides_with_parent"),
            (DeriveRefusal::BoundedParentNotDelegable, "bounded_parent_not_delegable"),
            (DeriveRefusal::ParentNotDelegable, "parent_not_delegable"),
            (DeriveRefusal::DepthExhausted, "depth_exhausted"),
            (DeriveRefusal::CapabilityNotWithinParent, "capability_not_within_parent"),
            (DeriveRefusal::PurposeNotWithinParent, "purpose_not_within_parent"),
            (DeriveRefusal::WindowNotWithinParent, "window_not_within_parent"),
            (DeriveRefusal::IssuedBeforeParent, "issued_before_parent"),
            (DeriveRefusal::MalformedChild, "malformed_child"),
        ];
        for (refusal, spelling) in spellings {
            assert_eq!(refusal.as_str(), spelling, "{refusal:?}");
        }
    }
}
