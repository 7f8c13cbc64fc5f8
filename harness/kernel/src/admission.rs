//! `admitTurn` (execution admission) and the bare `authorize` decision.

use crate::decision::{unavailable_decision, Ask};
use crate::kernel::Kernel;
use crate::lease_table::check_abort;
use sharedos_authz::authority::AuthorityResolution;
use sharedos_authz::authorizer::Matcher;
use sharedos_model::access::AccessContext;
use sharedos_model::address::Address;
use sharedos_model::capability::{Decision, Requirement, ResourceRef};
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;

/// The resource namespace of execution capabilities.
pub const EXECUTION_NAMESPACE: &str = "sharedos.execution";

/// The requirement of running `agent` for `context`'s owner (K84).
#[must_use]
pub fn execution_requirement(context: &AccessContext, agent: &Address) -> Requirement {
    Requirement {
        resource: ResourceRef {
            namespace: EXECUTION_NAMESPACE.to_string(),
            path: agent.path(),
            owner: Some(context.owner.clone()),
        },
        action: "invoke".to_string(),
    }
}

impl Kernel {
    /// Authorizes `sharedos.execution / [kind,id] / invoke` for `agent`,
    /// consuming a bounded use; every answer is recorded.
    ///
    /// # Errors
    /// An abort, or a pre-effect audit outage.
    pub async fn admit_turn(
        &self,
        context: &AccessContext,
        agent: &Address,
        signal: &AbortSignal,
    ) -> Result<Decision, KernelError> {
        let requirement = execution_requirement(context, agent);
        self.decide_operation(context, &requirement, true, signal).await
    }

    /// A bare decision (non-consuming, recorded) that describes missing authority.
    ///
    /// # Errors
    /// An abort, or a pre-effect audit outage.
    pub async fn authorize(
        &self,
        context: &AccessContext,
        requirement: &Requirement,
        signal: &AbortSignal,
    ) -> Result<Decision, KernelError> {
        self.decide_operation(context, requirement, false, signal).await
    }

    async fn decide_operation(
        &self,
        context: &AccessContext,
        requirement: &Requirement,
        consume: bool,
        signal: &AbortSignal,
    ) -> Result<Decision, KernelError> {
        check_abort(signal)?;
        let state = self.turn_state(context, signal).await?;
        let ask = Ask { context, requirement, matcher: Matcher::Invocation, consume, operation_id: None };
        match &*state.authority {
            AuthorityResolution::Resolved(authority) => self.core.decide_recorded(authority, &ask).await,
            AuthorityResolution::Unavailable(cause) => {
                let decision = unavailable_decision(cause.as_str());
                self.core.record_decision("", &ask, &decision, None).await?;
                Ok(decision)
            }
        }
    }
}
