//! The conformance world, reduced to what authorization needs.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use sharedos_authz::authority::{resolve_authority, snapshot, AuthorityResolution, PolicyState, ResolvedAuthority};
use sharedos_authz::authorizer::{Matcher, Question};
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Capability, Constraints, Grant, Requirement, ResourceRef, Scope};
use std::rc::Rc;

pub const NS: &str = "world-conformance";
pub const PURPOSE: &str = "conformance-probe";
pub const NOW: &str = "2026-08-18T09:00:00.000Z";
pub const LATER: &str = "2026-08-18T09:00:01.000Z";
pub const EARLIER: &str = "2026-08-18T08:59:59.000Z";
pub const ISSUED: &str = "2026-08-18T08:00:00.000Z";

pub fn alice() -> Address {
    Address::human("user-alice")
}
pub fn mallory() -> Address {
    Address::agent("agent-mallory")
}
pub fn orchestrator() -> Address {
    Address::agent("agent-orchestrator")
}

pub fn ctx() -> AccessContext {
    AccessContext {
        namespace_id: NS.to_string(),
        actor: mallory(),
        authority: orchestrator(),
        owner: alice(),
        purpose: PURPOSE.to_string(),
        trace_id: "trace-conformance".to_string(),
        enabled_tool_namespaces: vec!["files".to_string()],
        now: NOW.to_string(),
        turn_id: None,
    }
}

pub fn path(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| (*s).to_string()).collect()
}

/// A capability owned by alice.
pub fn cap(ns: &str, p: &[&str], actions: &[&str], scope: Scope) -> Capability {
    Capability {
        resource: ResourceRef { namespace: ns.to_string(), path: path(p), owner: Some(alice()) },
        actions: actions.iter().map(|s| (*s).to_string()).collect(),
        scope,
    }
}

/// A capability with no owner (resolves to the presenter's owner).
pub fn unowned(ns: &str, p: &[&str], actions: &[&str], scope: Scope) -> Capability {
    Capability {
        resource: ResourceRef { owner: None, ..cap(ns, p, actions, scope).resource },
        ..cap(ns, p, actions, scope)
    }
}

pub fn files(p: &[&str], actions: &[&str]) -> Capability {
    cap("files", p, actions, Scope::Descendants)
}

/// A requirement with the owner omitted (the context's).
pub fn req(ns: &str, p: &[&str], action: &str) -> Requirement {
    Requirement {
        resource: ResourceRef { namespace: ns.to_string(), path: path(p), owner: None },
        action: action.to_string(),
    }
}

pub fn read(p: &[&str]) -> Requirement {
    req("files", p, "read")
}

/// Orchestrator → mallory grant, active for the probe purpose.
pub fn grant(id: &str, capabilities: Vec<Capability>) -> Grant {
    Grant {
        id: id.to_string(),
        namespace_id: NS.to_string(),
        subject: mallory(),
        issuer: orchestrator(),
        capabilities,
        constraints: Constraints { purposes: Some(vec![PURPOSE.to_string()]), ..Constraints::default() },
        issued_at: ISSUED.to_string(),
        revoked_at: None,
        parent_grant_id: None,
        metadata: None,
    }
}

/// Alice → orchestrator root grant with delegation depth 2.
pub fn root(id: &str, capabilities: Vec<Capability>) -> Grant {
    let mut g = grant(id, capabilities);
    g.subject = orchestrator();
    g.issuer = alice();
    g.constraints.delegation_depth = Some(2);
    g
}

/// A child of `parent` (issuer = parent's subject), depth 1 below.
pub fn child(id: &str, parent: &Grant, capabilities: Vec<Capability>) -> Grant {
    let mut g = grant(id, capabilities);
    g.issuer = parent.subject.clone();
    g.parent_grant_id = Some(parent.id.clone());
    g.constraints.expires_at = parent.constraints.expires_at.clone();
    g.constraints.not_before = parent.constraints.not_before.clone();
    g
}

pub fn authority(grants: Vec<Grant>) -> ResolvedAuthority {
    authority_with(grants, PolicyState::Absent)
}

pub fn authority_with(grants: Vec<Grant>, policy: PolicyState) -> ResolvedAuthority {
    let context = ctx();
    let grants: Vec<Rc<Grant>> = grants.into_iter().map(Rc::new).collect();
    ResolvedAuthority { snapshot: snapshot(&grants, &context.now), context, grants, policy }
}

pub fn resolve(value: serde_json::Value) -> AuthorityResolution {
    resolve_authority(&ctx(), Ok(value), PolicyState::Absent)
}

pub fn invoke(requirement: &Requirement) -> Question<'_> {
    Question { requirement, matcher: Matcher::Invocation, consume: true, operation_at: None, describe_missing: false }
}

pub fn peek(requirement: &Requirement) -> Question<'_> {
    Question { consume: false, ..invoke(requirement) }
}

pub fn discover(requirement: &Requirement) -> Question<'_> {
    Question { matcher: Matcher::Discovery, consume: false, ..invoke(requirement) }
}
