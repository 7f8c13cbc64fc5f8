//! The decision walk (`decide`): one requirement against a resolved authority.

use crate::authority::ResolvedAuthority;
use crate::ports::{DelegationResolver, GrantVerifier, HostCeiling, UsageStore};
use sharedos_model::capability::{Decision, Requirement};
use std::rc::Rc;

/// Which matcher a decision uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matcher {
    /// The exact, argument-derived requirement of a call.
    Invocation,
    /// A tool's declared ceiling, for the catalogue (intersection).
    Discovery,
}

/// Why one grant did not carry a requirement (host-only explanation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Issuer is not the context's authority.
    Issuer,
    /// Subject is not the context's actor.
    Subject,
    /// Another world.
    Namespace,
    /// Not active at the decision's instants.
    Window,
    /// Purpose not listed.
    Purpose,
    /// The grant verifier refused.
    Verifier,
    /// No capability matched.
    Capability,
    /// The delegation chain failed.
    Delegation,
    /// Bounded and spent.
    Exhausted,
}

impl Rejection {
    /// The audit spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Issuer => "issuer",
            Rejection::Subject => "subject",
            Rejection::Namespace => "namespace",
            Rejection::Window => "window",
            Rejection::Purpose => "purpose",
            Rejection::Verifier => "verifier",
            Rejection::Capability => "capability",
            Rejection::Delegation => "delegation",
            Rejection::Exhausted => "exhausted",
        }
    }
}

/// Host-only account of a decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explanation {
    /// How many grants were walked.
    pub grants_resolved: usize,
    /// Each rejected grant with its first failed condition.
    pub rejected_grants: Vec<(String, Rejection)>,
    /// A port the decision needed and did not have (`usageStore`, `delegationResolver`).
    pub missing_dependency: Option<&'static str>,
}

/// One question for the authorizer.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    /// What is needed.
    pub requirement: &'a Requirement,
    /// Invocation or discovery.
    pub matcher: Matcher,
    /// Spend a bounded use when allowed.
    pub consume: bool,
    /// The operation instant (`None`: the admission instant).
    pub operation_at: Option<&'a str>,
    /// Attach `requiredAuthority` to a `no_matching_grant`.
    pub describe_missing: bool,
}

/// The authorizer and the ports it consults.
#[derive(Clone, Default)]
pub struct Authorizer {
    /// Usage counter for bounded grants; `None` makes bounded grants fail closed.
    pub usage: Option<Rc<dyn UsageStore>>,
    /// Ancestor source; `None` makes derived grants unverified.
    pub resolver: Option<Rc<dyn DelegationResolver>>,
    /// Optional grant verifier.
    pub verifier: Option<Rc<dyn GrantVerifier>>,
    /// Optional host ceiling.
    pub ceiling: Option<Rc<dyn HostCeiling>>,
}

impl Authorizer {
    /// Decides `question` against `authority` (30-kernel §3.1).
    pub fn decide(&self, authority: &ResolvedAuthority, question: Question<'_>) -> (Decision, Explanation) {
        let _ = (authority, question);
        todo!("decide")
    }
}
