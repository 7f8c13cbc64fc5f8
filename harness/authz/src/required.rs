//! Describing the authority a refused invocation lacked (ADR 0019).
//!
//! The description restates what the caller asked for, stamped from the
//! trusted context; it consults no provider, so it cannot reveal whether the
//! resource exists. Its id is derived from the ask alone (not from
//! `requestedAt`), so the same missing authority has one id across turns.

use serde::Serialize;
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::canonical::tagged_hash;
use sharedos_model::capability::{Capability, CapabilityRequest, Constraints, Requirement, Scope};

/// Domain tag of a capability request's id.
pub const REQUEST_ID_TAG: &str = "sharedos-conformance/capability-request/v1";

/// Prefix of every derived request id.
pub const REQUEST_ID_PREFIX: &str = "capreq-";

/// The part of a request its id is derived from.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ask<'a> {
    namespace_id: &'a str,
    requester: &'a Address,
    owner: &'a Address,
    capabilities: &'a [Capability],
    purpose: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    constraints: Option<&'a Constraints>,
}

/// The deterministic id of an ask made in `context`; `None` only when the
/// ask has no canonical form.
#[must_use]
pub fn request_id(
    context: &AccessContext,
    capabilities: &[Capability],
    purpose: &str,
    constraints: Option<&Constraints>,
) -> Option<String> {
    let ask = Ask {
        namespace_id: &context.namespace_id,
        requester: &context.actor,
        owner: &context.owner,
        capabilities,
        purpose,
        constraints,
    };
    tagged_hash(REQUEST_ID_TAG, &ask).ok().map(|hash| format!("{REQUEST_ID_PREFIX}{hash}"))
}

/// A request for exactly `requirement` (one exact capability) in `context`.
#[must_use]
pub fn describe_required_authority(context: &AccessContext, requirement: &Requirement) -> Option<CapabilityRequest> {
    let capability = Capability {
        resource: requirement.resource.clone(),
        actions: vec![requirement.action.clone()],
        scope: Scope::Exact,
    };
    let capabilities = vec![capability];
    let id = request_id(context, &capabilities, &context.purpose, None)?;
    Some(CapabilityRequest {
        id,
        namespace_id: context.namespace_id.clone(),
        requester: context.actor.clone(),
        owner: context.owner.clone(),
        capabilities,
        purpose: context.purpose.clone(),
        constraints: None,
        requested_at: context.now.clone(),
        metadata: None,
    })
}
