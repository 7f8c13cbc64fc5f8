//! Whether a capability covers a requirement, intersects a tool's declared
//! ceiling, or lies inside another capability (K19–K24, K55).
//!
//! Paths are always compared segment by segment: `["cell-3"]` is a prefix of
//! `["cell-3", "x"]` and never of `["cell-30"]`.

use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Capability, Requirement, ResourceRef, Scope};

/// The action literal that covers every action when a grant lists it.
pub const ANY_ACTION: &str = "*";

/// True when `prefix` is a segment-wise prefix of (or equal to) `path`.
#[must_use]
pub fn segment_prefix(prefix: &[String], path: &[String]) -> bool {
    prefix.len() <= path.len() && prefix.iter().zip(path).all(|(a, b)| a == b)
}

/// The owner a resource is judged against: its own, or the context's when omitted.
#[must_use]
pub fn resolved_owner<'a>(resource: &'a ResourceRef, context: &'a AccessContext) -> &'a Address {
    resource.owner.as_ref().unwrap_or(&context.owner)
}

/// True when a capability listing `granted` covers `action`.
///
/// Literal comparison only: `"*"` in the grant covers everything, while a
/// requested `"*"` or `"snapshot:*"` is just another string.
#[must_use]
pub fn action_covered(granted: &[String], action: &str) -> bool {
    granted.iter().any(|a| a == action || a == ANY_ACTION)
}

/// Namespace, action and resolved owner agree; paths are left to the caller.
fn same_domain(capability: &Capability, requirement: &Requirement, context: &AccessContext) -> bool {
    capability.resource.namespace == requirement.resource.namespace
        && action_covered(&capability.actions, &requirement.action)
        && resolved_owner(&capability.resource, context) == resolved_owner(&requirement.resource, context)
}

/// Invocation matcher: the capability covers exactly this requirement.
#[must_use]
pub fn capability_matches(capability: &Capability, requirement: &Requirement, context: &AccessContext) -> bool {
    if !same_domain(capability, requirement, context) {
        return false;
    }
    let granted = &capability.resource.path;
    let wanted = &requirement.resource.path;
    match capability.scope {
        Scope::Exact => granted == wanted,
        Scope::Descendants => segment_prefix(granted, wanted),
    }
}

/// Discovery matcher: some call the tool's declared `ceiling` admits could be
/// covered by the capability, so the tool may be listed. The exact call is
/// still checked at invocation.
#[must_use]
pub fn capability_intersects_ceiling(capability: &Capability, ceiling: &Requirement, context: &AccessContext) -> bool {
    if !same_domain(capability, ceiling, context) {
        return false;
    }
    let granted = &capability.resource.path;
    let declared = &ceiling.resource.path;
    match capability.scope {
        Scope::Exact => segment_prefix(declared, granted),
        Scope::Descendants => segment_prefix(declared, granted) || segment_prefix(granted, declared),
    }
}

/// True when a requirement a tool resolved stays inside the ceiling it
/// declared: same action, namespace and resolved owner, and a path under the
/// declared one (the kernel's tool-ceiling check).
#[must_use]
pub fn requirement_within_ceiling(requirement: &Requirement, declared: &Requirement, context: &AccessContext) -> bool {
    requirement.action == declared.action
        && requirement.resource.namespace == declared.resource.namespace
        && resolved_owner(&requirement.resource, context) == resolved_owner(&declared.resource, context)
        && segment_prefix(&declared.resource.path, &requirement.resource.path)
}

/// Actions and paths of `child` fit inside `parent`; owners are the caller's.
fn reach_within(child: &Capability, parent: &Capability) -> bool {
    if child.resource.namespace != parent.resource.namespace {
        return false;
    }
    let parent_any = parent.actions.iter().any(|a| a == ANY_ACTION);
    if !parent_any && !child.actions.iter().all(|a| parent.actions.contains(a)) {
        return false;
    }
    match parent.scope {
        Scope::Exact => child.scope == Scope::Exact && child.resource.path == parent.resource.path,
        Scope::Descendants => segment_prefix(&parent.resource.path, &child.resource.path),
    }
}

/// Delegation-chain containment: everything `child` permits in `context`,
/// `parent` permits too (owners resolved against the context).
#[must_use]
pub fn capability_within(child: &Capability, parent: &Capability, context: &AccessContext) -> bool {
    resolved_owner(&child.resource, context) == resolved_owner(&parent.resource, context) && reach_within(child, parent)
}

/// Issuing-side containment, which must hold whoever later presents the
/// grant: an unowned parent capability resolves to the presenter's owner, so
/// a child pinning an owner would be wider in every other context; and a
/// child may carry `"*"` only when the parent does.
#[must_use]
pub fn capability_within_in_any_context(child: &Capability, parent: &Capability) -> bool {
    if child.resource.owner != parent.resource.owner {
        return false;
    }
    let parent_any = parent.actions.iter().any(|a| a == ANY_ACTION);
    if !parent_any && child.actions.iter().any(|a| a == ANY_ACTION) {
        return false;
    }
    reach_within(child, parent)
}

/// True when every capability of `child` lies inside one capability of
/// `parents` (never pieced together from several).
#[must_use]
pub fn all_within(child: &[Capability], parents: &[Capability], context: &AccessContext) -> bool {
    child.iter().all(|c| parents.iter().any(|p| capability_within(c, p, context)))
}
