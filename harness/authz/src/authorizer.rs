//! The decision walk (`decide`): one requirement against a resolved authority.

use crate::activity::{inactive_reason_in, Inactivity, Instants, Window};
use crate::authority::{PolicyState, ResolvedAuthority};
use crate::delegation::{validate_chain, ChainVerdict, MAX_CHAIN_LINKS};
use crate::matching::{capability_intersects_ceiling, capability_matches};
use crate::ports::{CeilingVerdict, DelegationResolver, GrantVerifier, HostCeiling, UsageStore};
use crate::required::describe_required_authority;
use serde_json::{json, Map, Value};
use sharedos_model::access::AccessContext;
use sharedos_model::capability::{Capability, Decision, Grant, Requirement};
use sharedos_model::codes::ReasonCode;
use sharedos_model::instant::Instant;
use std::cell::RefCell;
use std::rc::Rc;

/// Which matcher a decision uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matcher {
    /// The exact, argument-derived requirement of a call.
    Invocation,
    /// A tool's declared ceiling, for the catalogue (intersection).
    Discovery,
}

impl Matcher {
    /// True when `capability` satisfies `requirement` under this matcher.
    #[must_use]
    pub fn accepts(self, capability: &Capability, requirement: &Requirement, context: &AccessContext) -> bool {
        match self {
            Matcher::Invocation => capability_matches(capability, requirement, context),
            Matcher::Discovery => capability_intersects_ceiling(capability, requirement, context),
        }
    }
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

/// What decisions made together share: they are made against one
/// authority with nothing able to run between them (no await), so neither
/// the resolver nor the verifier can change in between. Each grant's
/// ancestors need walking, its window parsing and its eligibility judging
/// once per pair of instants for the whole batch.
#[derive(Debug, Default)]
pub struct ChainMemo {
    verdicts: RefCell<Vec<(usize, Instants, ChainVerdict)>>,
    /// Each grant's parsed window, by position in the authority.
    windows: RefCell<Vec<Option<Window>>>,
    /// Each grant's first failed eligibility condition (or none) at the
    /// instants it was judged at, by position: eligibility reads the grant,
    /// the shared context and the instants, never the requirement.
    eligibility: RefCell<Vec<Option<Judged>>>,
    /// The instants of the last question's operation instant (the batch
    /// shares one context, so only that instant can differ).
    instants: RefCell<Option<(Option<String>, Option<Instants>)>>,
}

/// A grant's eligibility as judged at a pair of instants: its first failed
/// condition, or `None` when it is eligible.
type Judged = (Instants, Option<Rejection>);

impl ChainMemo {
    /// An empty memo for one batch of decisions.
    #[must_use]
    pub fn new() -> ChainMemo {
        ChainMemo::default()
    }

    /// The window of grant `index`, parsed only once.
    fn window(&self, index: usize, grant: &Grant) -> Window {
        let mut windows = self.windows.borrow_mut();
        if windows.len() <= index {
            windows.resize(index + 1, None);
        }
        *windows[index].get_or_insert_with(|| Window::of(grant))
    }

    /// The instants of a decision against `context` at `operation_at`,
    /// parsed only when the operation instant changes.
    fn instants(&self, context: &AccessContext, operation_at: Option<&str>) -> Option<Instants> {
        let mut known = self.instants.borrow_mut();
        match &*known {
            Some((at, instants)) if at.as_deref() == operation_at => *instants,
            _ => {
                let instants = decision_instants(context, operation_at);
                *known = Some((operation_at.map(str::to_string), instants));
                instants
            }
        }
    }

    /// Why grant `index` is ineligible at `at` (or `None`), judged by
    /// `judge` only once per instants.
    fn ineligibility(
        &self,
        index: usize,
        at: Instants,
        judge: impl FnOnce() -> Option<Rejection>,
    ) -> Option<Rejection> {
        let known = self.eligibility.borrow().get(index).copied().flatten();
        match known {
            Some((when, answer)) if when == at => answer,
            _ => {
                let answer = judge();
                let mut eligibility = self.eligibility.borrow_mut();
                if eligibility.len() <= index {
                    eligibility.resize(index + 1, None);
                }
                eligibility[index] = Some((at, answer));
                answer
            }
        }
    }

    /// The verdict on grant `index` at `at`, walked by `walk` only once.
    fn verdict(&self, index: usize, at: Instants, walk: impl FnOnce() -> ChainVerdict) -> ChainVerdict {
        let known = self.verdicts.borrow().iter().find(|(i, when, _)| *i == index && *when == at).map(|v| v.2.clone());
        known.unwrap_or_else(|| {
            let verdict = walk();
            self.verdicts.borrow_mut().push((index, at, verdict.clone()));
            verdict
        })
    }
}

impl Authorizer {
    /// Decides `question` against `authority` (K11–K14, K60).
    pub fn decide(&self, authority: &ResolvedAuthority, question: Question<'_>) -> (Decision, Explanation) {
        self.decide_with(authority, question, None)
    }

    /// [`Authorizer::decide`] as one of a batch sharing `memo`; every
    /// decision of the batch must be made against the same `authority`.
    /// Batched decisions (a listing, a reach) are never recorded one by one,
    /// so they are not explained: rejected grants are not collected.
    pub fn decide_in_batch(&self, authority: &ResolvedAuthority, question: Question<'_>, memo: &ChainMemo) -> Decision {
        self.decide_with(authority, question, Some(memo)).0
    }

    fn decide_with(
        &self,
        authority: &ResolvedAuthority,
        question: Question<'_>,
        memo: Option<&ChainMemo>,
    ) -> (Decision, Explanation) {
        let context = &authority.context;
        let mut walk = Walk {
            explanation: Explanation { grants_resolved: authority.grants.len(), ..Explanation::default() },
            explained: memo.is_none(),
            ..Walk::default()
        };
        let at = match memo {
            Some(memo) => memo.instants(context, question.operation_at),
            None => decision_instants(context, question.operation_at),
        };
        let Some(at) = at else {
            return (Decision::deny(ReasonCode::InvalidContext), walk.explanation);
        };
        if !request_is_well_formed(question.requirement, context) {
            return (Decision::deny(ReasonCode::InvalidRequest), walk.explanation);
        }
        for (index, grant) in authority.grants.iter().enumerate() {
            let chain = || validate_chain(grant, context, at, self.resolver.as_deref(), MAX_CHAIN_LINKS);
            let chain = |at| match memo {
                Some(memo) => memo.verdict(index, at, chain),
                None => chain(),
            };
            let ineligible = match memo {
                Some(memo) => {
                    memo.ineligibility(index, at, || self.ineligibility(grant, memo.window(index, grant), context, at))
                }
                None => self.ineligibility(grant, Window::of(grant), context, at),
            };
            if let Some(decision) = self.consider(authority, grant, ineligible, &question, at, chain, &mut walk) {
                return (decision, walk.explanation);
            }
        }
        let decision = self.conclude(context, &question, &mut walk);
        (decision, walk.explanation)
    }

    /// One grant of the walk: `Some` ends the decision, `None` moves on.
    // Every argument is one thing the walk over a grant needs.
    #[allow(clippy::too_many_arguments)]
    fn consider(
        &self,
        authority: &ResolvedAuthority,
        grant: &Grant,
        ineligible: Option<Rejection>,
        question: &Question<'_>,
        at: Instants,
        chain: impl FnOnce(Instants) -> ChainVerdict,
        walk: &mut Walk,
    ) -> Option<Decision> {
        let context = &authority.context;
        if let Some(reason) = ineligible {
            walk.reject(grant, reason);
            return None;
        }
        if !grant.capabilities.iter().any(|c| question.matcher.accepts(c, question.requirement, context)) {
            walk.reject(grant, Rejection::Capability);
            return None;
        }
        let verdict = chain(at);
        if !matches!(verdict, ChainVerdict::Valid { .. }) {
            walk.reject(grant, Rejection::Delegation);
            walk.note_delegation(verdict);
            return None;
        }
        let allowed = match self.narrow(authority, grant, question) {
            Narrowed::Allowed(decision) => decision,
            Narrowed::Denied(decision) => {
                walk.policy_denial.get_or_insert(decision);
                return None;
            }
            Narrowed::Unavailable => return Some(Decision::deny(ReasonCode::HostPolicyUnavailable)),
        };
        self.spend(context, grant, question, allowed, walk)
    }

    /// The first eligibility condition `grant` fails, in the fixed order.
    fn ineligibility(&self, grant: &Grant, window: Window, context: &AccessContext, at: Instants) -> Option<Rejection> {
        if grant.issuer != context.authority {
            return Some(Rejection::Issuer);
        }
        if grant.subject != context.actor {
            return Some(Rejection::Subject);
        }
        if grant.namespace_id != context.namespace_id {
            return Some(Rejection::Namespace);
        }
        match inactive_reason_in(grant, window, &context.purpose, at) {
            Some(Inactivity::Window) => return Some(Rejection::Window),
            Some(Inactivity::Purpose) => return Some(Rejection::Purpose),
            None => {}
        }
        let verified = self.verifier.as_ref().is_none_or(|v| v.verify(grant).unwrap_or(false));
        (!verified).then_some(Rejection::Verifier)
    }

    /// Shows the host ceiling (if any) the allow `grant` would carry.
    fn narrow(&self, authority: &ResolvedAuthority, grant: &Grant, question: &Question<'_>) -> Narrowed {
        let allowed = Decision::allow(&grant.id);
        let Some(ceiling) = &self.ceiling else {
            return Narrowed::Allowed(allowed);
        };
        let policy = match &authority.policy {
            PolicyState::Unavailable => return Narrowed::Unavailable,
            PolicyState::Absent => None,
            PolicyState::Loaded { policy, .. } => Some(policy),
        };
        let live = match question.operation_at {
            Some(now) => authority.context.at(now),
            None => authority.context.clone(),
        };
        match ceiling.narrow(&allowed, question.requirement, &live, policy) {
            CeilingVerdict::Allow(answer) if answer.allowed => {
                if answer.matched_grant_id.as_deref() != Some(grant.id.as_str()) {
                    return Narrowed::Unavailable;
                }
                Narrowed::Allowed(Decision { metadata: answer.metadata, ..allowed })
            }
            CeilingVerdict::Allow(answer) => Narrowed::Denied(policy_denial(grant, answer.metadata)),
            CeilingVerdict::Deny(metadata) => Narrowed::Denied(policy_denial(grant, metadata)),
            CeilingVerdict::Malfunction => Narrowed::Unavailable,
        }
    }

    /// Bounded use: spends (or, when not consuming, checks) one use.
    fn spend(
        &self,
        context: &AccessContext,
        grant: &Grant,
        question: &Question<'_>,
        allowed: Decision,
        walk: &mut Walk,
    ) -> Option<Decision> {
        let Some(max_uses) = grant.constraints.max_uses else {
            return Some(allowed);
        };
        let Some(usage) = &self.usage else {
            walk.explanation.missing_dependency = Some("usageStore");
            return Some(Decision::deny(ReasonCode::UsageStoreUnavailable));
        };
        // Discovery never spends, whatever the caller asked for.
        let consume = question.consume && question.matcher == Matcher::Invocation;
        let available = if consume {
            usage.try_consume(&context.namespace_id, &grant.id, max_uses)
        } else {
            usage.get_usage(&context.namespace_id, &grant.id).map(|used| used < max_uses)
        };
        match available {
            Ok(true) => Some(allowed),
            Ok(false) => {
                walk.reject(grant, Rejection::Exhausted);
                walk.exhausted = true;
                None
            }
            Err(_) => Some(Decision::deny(ReasonCode::UsageStoreUnavailable)),
        }
    }

    /// The terminal denial after every grant was walked, by precedence.
    fn conclude(&self, context: &AccessContext, question: &Question<'_>, walk: &mut Walk) -> Decision {
        match walk.delegation.take() {
            Some(ChainVerdict::Unverified { code, grant_id }) => {
                if self.resolver.is_none() {
                    walk.explanation.missing_dependency = Some("delegationResolver");
                }
                return delegation_denial(ReasonCode::DelegationChainUnverified, code.as_str(), &grant_id);
            }
            Some(ChainVerdict::Invalid { code, grant_id }) => {
                return delegation_denial(ReasonCode::DelegationChainInvalid, code.as_str(), &grant_id);
            }
            Some(ChainVerdict::Valid { .. }) | None => {}
        }
        if let Some(denial) = walk.policy_denial.take() {
            return denial;
        }
        if walk.exhausted {
            return Decision::deny(ReasonCode::GrantExhausted);
        }
        let mut denial = Decision::deny(ReasonCode::NoMatchingGrant);
        if question.describe_missing && question.matcher == Matcher::Invocation {
            denial.required_authority = describe_required_authority(context, question.requirement);
        }
        denial
    }
}

/// What the walk remembers between grants.
#[derive(Default)]
struct Walk {
    explanation: Explanation,
    /// Whether rejected grants are collected into the explanation.
    explained: bool,
    delegation: Option<ChainVerdict>,
    policy_denial: Option<Decision>,
    exhausted: bool,
}

impl Walk {
    fn reject(&mut self, grant: &Grant, reason: Rejection) {
        if self.explained {
            self.explanation.rejected_grants.push((grant.id.clone(), reason));
        }
    }

    /// Keeps the worst chain failure: unverified beats invalid; among equals the first stays.
    fn note_delegation(&mut self, verdict: ChainVerdict) {
        let replace = matches!(
            (&self.delegation, &verdict),
            (None, _) | (Some(ChainVerdict::Invalid { .. }), ChainVerdict::Unverified { .. })
        );
        if replace {
            self.delegation = Some(verdict);
        }
    }
}

/// The host ceiling's effect on one grant.
enum Narrowed {
    /// The allow stands (possibly with the ceiling's metadata).
    Allowed(Decision),
    /// Refused; remembered as a `host_policy_denied` candidate.
    Denied(Decision),
    /// The policy or the ceiling failed; the decision ends fail-closed.
    Unavailable,
}

/// The two instants of a decision, or `None` when either does not parse or
/// the context lacks a purpose or trace.
fn decision_instants(context: &AccessContext, operation_at: Option<&str>) -> Option<Instants> {
    if context.purpose.trim().is_empty() || context.trace_id.trim().is_empty() {
        return None;
    }
    let admitted_at = Instant::parse(&context.now)?;
    // An unparsable operation instant is a broken question, not an absent one.
    let now = match operation_at {
        // The kernel asks at the context's own instant: the same text, parsed once.
        Some(text) if text == context.now => admitted_at,
        Some(text) => Instant::parse(text)?,
        None => admitted_at,
    };
    Some(Instants { admitted_at, now })
}

/// False for an empty action or namespace, or a resource in another owner's world.
fn request_is_well_formed(requirement: &Requirement, context: &AccessContext) -> bool {
    !requirement.action.is_empty()
        && !requirement.resource.namespace.is_empty()
        && requirement.resource.owner.as_ref().is_none_or(|owner| owner == &context.owner)
}

fn policy_denial(grant: &Grant, metadata: Option<Map<String, Value>>) -> Decision {
    Decision { matched_grant_id: Some(grant.id.clone()), metadata, ..Decision::deny(ReasonCode::HostPolicyDenied) }
}

fn delegation_denial(code: ReasonCode, chain_code: &str, grant_id: &str) -> Decision {
    let mut metadata = Map::new();
    metadata.insert("delegation".to_string(), json!({ "code": chain_code, "grantId": grant_id }));
    Decision { metadata: Some(metadata), ..Decision::deny(code) }
}

#[cfg(test)]
mod rejection_tests {
    use super::Rejection;

    /// The audit log's spellings are data other tools read: each is pinned.
    #[test]
    fn every_rejection_has_its_own_audit_spelling() {
        let spelled = [
            (Rejection::Issuer, "issuer"),
            (Rejection::Subject, "subject"),
            (Rejection::Namespace, "namespace"),
            (Rejection::Window, "window"),
            (Rejection::Purpose, "purpose"),
            (Rejection::Verifier, "verifier"),
            (Rejection::Capability, "capability"),
            (Rejection::Delegation, "delegation"),
            (Rejection::Exhausted, "exhausted"),
        ];
        for (rejection, spelling) in spelled {
            assert_eq!(rejection.as_str(), spelling);
        }
    }
}
