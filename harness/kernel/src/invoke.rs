//! `invokeTool`: one mediated call, in the exact order K34–K45 state.
//!
//! Every exit writes one `tool.invoked` record (post-effect) except the
//! pre-port abort and the pre-effect audit outages, which raise instead.

use crate::audit::with_requirement;
use crate::decision::Ask;
use crate::kernel::Kernel;
use crate::lease_table::check_abort;
use crate::ports::{HandlerError, ParsedCall, ProviderError, ProviderErrorOrigin, ToolHandler};
use serde_json::{Map, Value};
use sharedos_authz::authority::{AuthorityResolution, ResolvedAuthority};
use sharedos_authz::authorizer::Matcher;
use sharedos_model::access::AccessContext;
use sharedos_model::audit::{AuditOutcome, AuditType, Source};
use sharedos_model::capability::Requirement;
use sharedos_model::codes::ReasonCode;
use sharedos_model::tool::{ToolCall, ToolResult, ToolStatus};
use sharedos_model::validate::Validate;
use sharedos_port::audit::{AuditEffect, AuditUnavailable};
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;

/// What the call's `tool.invoked` record will say, filled in as the call
/// advances through the steps.
#[derive(Default)]
struct CallRecord {
    requirement: Option<Requirement>,
    grant_id: Option<String>,
    cause: Option<String>,
    catalog_hash: Option<String>,
    /// An infrastructure fault behind a refusal whose own code is not one
    /// (a discovery outage surfacing as `tool_unavailable`).
    fail_closed: bool,
}

/// The call as it moves through the steps: the inputs, and what is known.
struct Call<'a> {
    context: &'a AccessContext,
    call: &'a ToolCall,
    signal: &'a AbortSignal,
    record: CallRecord,
}

/// A short, fixed message per code; never a port's own text.
pub(crate) fn message_for(code: ReasonCode) -> &'static str {
    match code {
        ReasonCode::TraceMismatch => "the call's trace does not match the context",
        ReasonCode::AuthorityUnavailable => "authority could not be established",
        ReasonCode::ToolCatalogUnavailable => "the tool catalogue is unavailable",
        ReasonCode::ToolUnavailable => "the tool is not available",
        ReasonCode::InvalidToolArguments => "the tool arguments are invalid",
        ReasonCode::ToolRequirementResolutionFailed => "the tool could not resolve its requirement",
        ReasonCode::InvalidToolRequirement => "the tool resolved a requirement outside its declaration",
        ReasonCode::ToolExecutionFailed => "the tool failed",
        ReasonCode::InvalidToolResult => "the tool returned a mismatched or malformed result",
        ReasonCode::InvalidRequest => "the request crosses the context's world",
        _ => "the operation was refused",
    }
}

impl Kernel {
    /// Mediates one tool call (K34–K45).
    ///
    /// # Errors
    /// An abort, or a pre-effect audit outage; every other refusal is a result.
    pub async fn invoke_tool(
        &self,
        context: &AccessContext,
        call: &ToolCall,
        signal: &AbortSignal,
    ) -> Result<ToolResult, KernelError> {
        check_abort(signal)?;
        let mut c = Call { context, call, signal, record: CallRecord::default() };
        // 1. The call must belong to the context's trace.
        if c.call.trace_id != c.context.trace_id {
            return Ok(self.refuse(&c, ToolStatus::Denied, ReasonCode::TraceMismatch).await);
        }
        // 2. Authority: the turn's lease, or loaded now.
        let state = self.turn_state(c.context, signal).await?;
        c.record.catalog_hash = state.catalog_hash();
        let authority = match &*state.authority {
            AuthorityResolution::Resolved(authority) => authority,
            AuthorityResolution::Unavailable(_) => {
                return Ok(self.refuse(&c, ToolStatus::Denied, ReasonCode::AuthorityUnavailable).await);
            }
        };
        // 3. The effective registry (held per turn).
        let Ok(registry) = self.registry(&state, c.context, signal).await else {
            return Ok(self.refuse(&c, ToolStatus::Failed, ReasonCode::ToolCatalogUnavailable).await);
        };
        // 4. Registered?
        let Some(handler) = registry.get(&c.call.tool).map(Rc::clone) else {
            c.record.cause = Some("not_registered".into());
            return Ok(self.refuse(&c, ToolStatus::Denied, ReasonCode::ToolUnavailable).await);
        };
        // 5. Tool namespace enabled?
        if !c.context.enabled_tool_namespaces.contains(&handler.definition().namespace) {
            c.record.cause = Some("namespace_disabled".into());
            return Ok(self.refuse(&c, ToolStatus::Denied, ReasonCode::ToolUnavailable).await);
        }
        // 6. Discoverable at the declared ceiling?
        let declared = handler.definition().required_capability.clone();
        let ask = Ask {
            context: c.context,
            requirement: &declared,
            matcher: Matcher::Discovery,
            consume: false,
            operation_id: Some(&c.call.id),
        };
        let (decision, explanation) = self.core.decide(authority, &ask);
        if !decision.allowed {
            self.core.record_decision(&authority.snapshot.hash, &ask, &decision, Some(&explanation)).await?;
            c.record.requirement = Some(declared);
            c.record.cause = Some(decision.reason_code.as_str().to_string());
            c.record.fail_closed = decision.reason_code.is_fail_closed();
            return Ok(self.refuse(&c, ToolStatus::Denied, ReasonCode::ToolUnavailable).await);
        }
        self.authorize_and_run(c, authority, handler, declared).await
    }

    /// Steps 7–15: parse, resolve, check, authorize, run, validate.
    async fn authorize_and_run(
        &self,
        mut c: Call<'_>,
        authority: &ResolvedAuthority,
        handler: Rc<dyn ToolHandler>,
        declared: Requirement,
    ) -> Result<ToolResult, KernelError> {
        // 7. The tool's own parser; its output is frozen as the parsed call.
        let mut parsed = match handler.parse_arguments(&c.call.arguments) {
            Ok(arguments) => ParsedCall::new(c.call, arguments),
            Err(_) => return Ok(self.refuse(&c, ToolStatus::Failed, ReasonCode::InvalidToolArguments).await),
        };
        // 8. The exact requirement, from the parsed call; what the tool
        // prepared on the way travels on the call to its invoke step.
        let requirement = match handler.resolve_requirement(c.context, &parsed) {
            None => declared.clone(),
            Some(Ok(resolution)) => {
                parsed.prepared = resolution.prepared;
                resolution.requirement
            }
            Some(Err(_)) => {
                return Ok(self.refuse(&c, ToolStatus::Failed, ReasonCode::ToolRequirementResolutionFailed).await);
            }
        };
        c.record.requirement = Some(requirement.clone());
        // 9. World boundary first: a foreign owner is a recorded denial.
        if requirement.resource.owner.as_ref().is_some_and(|owner| owner != &c.context.owner) {
            let ask = Ask {
                context: c.context,
                requirement: &requirement,
                matcher: Matcher::Invocation,
                consume: false,
                operation_id: Some(&c.call.id),
            };
            let decision = self.core.decide_recorded(authority, &ask).await?;
            let code = if decision.allowed { ReasonCode::InvalidRequest } else { decision.reason_code };
            return Ok(self.refuse(&c, ToolStatus::Denied, code).await);
        }
        // 10. The tool may not escape its own declaration; no grant is consulted.
        if !within_ceiling(&declared, &requirement, c.context) {
            return Ok(self.refuse(&c, ToolStatus::Failed, ReasonCode::InvalidToolRequirement).await);
        }
        // 11. The exact requirement, consuming.
        let ask = Ask {
            context: c.context,
            requirement: &requirement,
            matcher: Matcher::Invocation,
            consume: true,
            operation_id: Some(&c.call.id),
        };
        let decision = self.core.decide_recorded(authority, &ask).await?;
        c.record.grant_id = decision.matched_grant_id.clone();
        if !decision.allowed {
            return Ok(self.refuse(&c, ToolStatus::Denied, decision.reason_code).await);
        }
        // 12. Enter the port; a call stopped before this point writes nothing more.
        check_abort(c.signal)?;
        let outcome = handler.invoke(c.context, &parsed, c.signal).await;
        let message_cause = self.core.message_causes.borrow_mut().remove(&c.call.id);
        self.settle(c, outcome, message_cause).await
    }

    /// Steps 13–15: judge what the handler did.
    async fn settle(
        &self,
        mut c: Call<'_>,
        outcome: Result<ToolResult, HandlerError>,
        message_cause: Option<String>,
    ) -> Result<ToolResult, KernelError> {
        match outcome {
            Ok(result) => {
                let valid = result.call_id == c.call.id && result.tool == c.call.tool && result.validate().is_ok();
                if !valid {
                    return Ok(self.refuse(&c, ToolStatus::Failed, ReasonCode::InvalidToolResult).await);
                }
                c.record.cause = message_cause;
                let code = result.error().and_then(|e| ReasonCode::parse(&e.code));
                let reason = result.error().map(|e| e.code.clone());
                self.write_invoked(
                    &c,
                    outcome_of(result.status()),
                    reason,
                    code.is_some_and(ReasonCode::is_fail_closed),
                )
                .await;
                Ok(result)
            }
            Err(HandlerError::AuditUnavailable(outage)) => {
                let reason = Some(ReasonCode::AuditUnavailable.as_str().to_string());
                self.write_invoked(&c, AuditOutcome::Interrupted, reason, true).await;
                Err(KernelError::AuditUnavailable(AuditUnavailable {
                    effect: AuditEffect::Unknown,
                    cause: outage.cause,
                }))
            }
            Err(error) => match c.signal.reason() {
                Some(abort) => {
                    let reason = Some(ReasonCode::OperationAborted.as_str().to_string());
                    self.write_invoked(&c, AuditOutcome::Interrupted, reason, false).await;
                    Err(KernelError::Aborted(abort))
                }
                None => {
                    let detail = match error {
                        HandlerError::Failed(detail) => detail,
                        other => other.to_string(),
                    };
                    self.core.report(ProviderError {
                        origin: ProviderErrorOrigin::ToolHandler(c.call.tool.clone()),
                        detail,
                    });
                    Ok(self.refuse(&c, ToolStatus::Failed, ReasonCode::ToolExecutionFailed).await)
                }
            },
        }
    }

    /// A kernel refusal: the result, and its `tool.invoked` record.
    async fn refuse(&self, c: &Call<'_>, status: ToolStatus, code: ReasonCode) -> ToolResult {
        let result = ToolResult::refusal(c.call, status, code.as_str(), message_for(code), &c.context.now);
        self.write_invoked(
            c,
            outcome_of(status),
            Some(code.as_str().to_string()),
            code.is_fail_closed() || c.record.fail_closed,
        )
        .await;
        result
    }

    async fn write_invoked(&self, c: &Call<'_>, outcome: AuditOutcome, reason: Option<String>, fail_closed: bool) {
        let mut event = self.core.event(c.context, AuditType::ToolInvoked, outcome);
        event.operation_id = Some(c.call.id.clone());
        event.tool = Some(c.call.tool.clone());
        if let Some(requirement) = &c.record.requirement {
            with_requirement(&mut event, requirement, c.context);
        }
        event.grant_id = c.record.grant_id.clone();
        event.reason = reason;
        event.cause = c.record.cause.clone();
        event.source = Some(Source::Kernel);
        if fail_closed {
            event.fail_closed = Some(true);
        }
        event.metadata = catalog_metadata(c.record.catalog_hash.as_deref());
        self.core.write_post_owned(event).await;
    }
}

/// `{catalogHash}` when the turn published a catalogue.
pub(crate) fn catalog_metadata(hash: Option<&str>) -> Option<Map<String, Value>> {
    hash.map(|hash| {
        let mut metadata = Map::new();
        metadata.insert("catalogHash".into(), Value::from(hash));
        metadata
    })
}

fn outcome_of(status: ToolStatus) -> AuditOutcome {
    match status {
        ToolStatus::Succeeded => AuditOutcome::Succeeded,
        ToolStatus::Denied => AuditOutcome::Denied,
        ToolStatus::Failed => AuditOutcome::Failed,
    }
}

/// Step 10: same action, same resource namespace, same resolved owner, and
/// the declared path a segment-wise prefix of the requirement's.
#[must_use]
pub(crate) fn within_ceiling(declared: &Requirement, requirement: &Requirement, context: &AccessContext) -> bool {
    let owner_of = |r: &Requirement| r.resource.owner.clone().unwrap_or_else(|| context.owner.clone());
    declared.action == requirement.action
        && declared.resource.namespace == requirement.resource.namespace
        && owner_of(declared) == owner_of(requirement)
        && requirement.resource.path.starts_with(&declared.resource.path)
}

#[cfg(test)]
mod tests {
    use super::message_for;
    use sharedos_model::codes::ReasonCode;

    /// The message is the kernel's own words for the code, never a port's
    /// text; each refusal `invoke_tool` can give has its own.
    #[test]
    fn every_refusal_code_has_its_own_fixed_message() {
        let messages = [
            (ReasonCode::TraceMismatch, "the call's trace does not match the context"),
            (ReasonCode::AuthorityUnavailable, "authority could not be established"),
            (ReasonCode::ToolCatalogUnavailable, "the tool catalogue is unavailable"),
            (ReasonCode::ToolUnavailable, "the tool is not available"),
            (ReasonCode::InvalidToolArguments, "the tool arguments are invalid"),
            (ReasonCode::ToolRequirementResolutionFailed, "the tool could not resolve its requirement"),
            (ReasonCode::InvalidToolRequirement, "the tool resolved a requirement outside its declaration"),
            (ReasonCode::ToolExecutionFailed, "the tool failed"),
            (ReasonCode::InvalidToolResult, "the tool returned a mismatched or malformed result"),
            (ReasonCode::InvalidRequest, "the request crosses the context's world"),
            (ReasonCode::NoMatchingGrant, "the operation was refused"),
        ];
        for (code, message) in messages {
            assert_eq!(message_for(code), message, "{code}");
        }
    }
}
