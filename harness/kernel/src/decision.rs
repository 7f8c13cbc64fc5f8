//! Asking the authorizer and recording the answer as `authorization.checked`
//! (pre-effect: a failing write refuses the operation).

use crate::audit::with_requirement;
use crate::kernel::Core;
use serde_json::{json, Map, Value};
use sharedos_authz::authority::ResolvedAuthority;
use sharedos_authz::authorizer::{ChainMemo, Explanation, Matcher, Question};
use sharedos_model::access::AccessContext;
use sharedos_model::audit::{AuditOutcome, AuditType};
use sharedos_model::capability::{Decision, Requirement};
use sharedos_model::codes::ReasonCode;
use sharedos_port::error::KernelError;

/// One decision to make and record.
pub(crate) struct Ask<'a> {
    /// The live context (its `now` is the operation instant).
    pub(crate) context: &'a AccessContext,
    /// What is needed.
    pub(crate) requirement: &'a Requirement,
    /// Invocation or discovery.
    pub(crate) matcher: Matcher,
    /// Spend a bounded use.
    pub(crate) consume: bool,
    /// Call id or execution id.
    pub(crate) operation_id: Option<&'a str>,
}

impl Core {
    /// Decides without recording (listing discovery).
    pub(crate) fn decide(&self, authority: &ResolvedAuthority, ask: &Ask<'_>) -> (Decision, Explanation) {
        self.authorizer.decide(authority, question(ask))
    }

    /// [`Core::decide`] for one of several decisions made back to back
    /// (nothing awaited in between), sharing their chain walks; unexplained.
    pub(crate) fn decide_in(&self, authority: &ResolvedAuthority, ask: &Ask<'_>, memo: &ChainMemo) -> Decision {
        self.authorizer.decide_in_batch(authority, question(ask), memo)
    }

    /// Decides and writes `authorization.checked`.
    pub(crate) async fn decide_recorded(
        &self,
        authority: &ResolvedAuthority,
        ask: &Ask<'_>,
    ) -> Result<Decision, KernelError> {
        let (decision, explanation) = self.decide(authority, ask);
        self.record_decision(authority.snapshot.hash.as_str(), ask, &decision, Some(&explanation)).await?;
        Ok(decision)
    }

    /// Writes the `authorization.checked` record of `decision`.
    pub(crate) async fn record_decision(
        &self,
        authority_hash: &str,
        ask: &Ask<'_>,
        decision: &Decision,
        explanation: Option<&Explanation>,
    ) -> Result<(), KernelError> {
        let outcome = if decision.allowed { AuditOutcome::Allowed } else { AuditOutcome::Denied };
        let mut event = self.event(ask.context, AuditType::AuthorizationChecked, outcome);
        with_requirement(&mut event, ask.requirement, ask.context);
        if !authority_hash.is_empty() {
            event.authority_hash = Some(authority_hash.to_string());
        }
        event.operation_id = ask.operation_id.map(str::to_string);
        event.grant_id = decision.matched_grant_id.clone();
        event.consumed = Some(ask.consume);
        if !decision.allowed {
            event.reason = Some(decision.reason_code.as_str().to_string());
            if decision.reason_code.is_fail_closed() {
                event.fail_closed = Some(true);
            }
        }
        event.metadata = decision_metadata(decision, explanation);
        self.write_pre(event).await
    }
}

/// The authorizer's question for `ask`, at the live context's instant.
fn question<'a>(ask: &Ask<'a>) -> Question<'a> {
    Question {
        requirement: ask.requirement,
        matcher: ask.matcher,
        consume: ask.consume,
        operation_at: Some(&ask.context.now),
        describe_missing: ask.matcher == Matcher::Invocation,
    }
}

/// Decision metadata plus the host-only explanation.
fn decision_metadata(decision: &Decision, explanation: Option<&Explanation>) -> Option<Map<String, Value>> {
    let mut metadata = decision.metadata.clone().unwrap_or_default();
    if let Some(explanation) = explanation {
        metadata.insert("grantsResolved".into(), json!(explanation.grants_resolved));
        let rejected: Vec<Value> = explanation
            .rejected_grants
            .iter()
            .map(|(grant_id, reason)| json!({"grantId": grant_id, "reason": reason.as_str()}))
            .collect();
        metadata.insert("rejectedGrants".into(), Value::Array(rejected));
        if let Some(missing) = explanation.missing_dependency {
            metadata.insert("missingDependency".into(), Value::from(missing));
        }
    }
    if metadata.is_empty() {
        None
    } else {
        Some(metadata)
    }
}

/// The decision every operation gets when the turn's authority is unavailable.
pub(crate) fn unavailable_decision(cause: &str) -> Decision {
    let mut decision = Decision::deny(ReasonCode::AuthorityUnavailable);
    let mut metadata = Map::new();
    metadata.insert("authority".into(), json!({"code": cause}));
    decision.metadata = Some(metadata);
    decision
}
