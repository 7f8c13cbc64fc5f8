//! The two audit paths.
//!
//! Pre-effect records (authority loads, decisions, listings) gate the
//! operation: a failing write refuses it and nothing runs. Post-effect
//! records (outcomes, turn ends, refusals, escalations) never change what
//! the caller gets; a dropped record goes to the host's hook.

use crate::kernel::Core;
use crate::ports::AuditWriteError;
use sharedos_model::access::AccessContext;
use sharedos_model::audit::{AuditEvent, AuditOutcome, AuditType};
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_port::audit::{AuditEffect, AuditUnavailable};
use sharedos_port::error::KernelError;
use std::time::Duration;

impl Core {
    /// A record about `context` with a fresh id and nothing optional set.
    pub(crate) fn event(&self, context: &AccessContext, kind: AuditType, outcome: AuditOutcome) -> AuditEvent {
        AuditEvent::about((self.audit_ids)(), kind, outcome, context)
    }

    /// Writes a pre-effect record; a sink failure refuses the operation.
    /// Never time-bounded: a hanging sink holds back an operation that has not run.
    pub(crate) async fn write_pre(&self, event: AuditEvent) -> Result<(), KernelError> {
        self.audit_sink
            .write_owned(event)
            .await
            .map_err(|(_, cause)| KernelError::AuditUnavailable(AuditUnavailable { effect: AuditEffect::None, cause }))
    }

    /// [`Core::write_post`] for a record the caller no longer needs.
    pub(crate) async fn write_post_owned(&self, event: AuditEvent) {
        if self.audit_write_timeout_ms.is_some() {
            // A write abandoned at its timeout would take the record with
            // it, and the hook must still see it.
            return self.write_post(&event).await;
        }
        if let Err((event, cause)) = self.audit_sink.write_owned(event).await {
            if let Some(hook) = &self.on_audit_error {
                hook(&event, &AuditWriteError::Failed(cause));
            }
        }
    }

    /// Writes a post-effect record; a failure or timeout goes to the hook only.
    pub(crate) async fn write_post(&self, event: &AuditEvent) {
        let outcome = match self.audit_write_timeout_ms {
            None => self.audit_sink.write(event).await.map_err(AuditWriteError::Failed),
            Some(ms) => match tokio::time::timeout(Duration::from_millis(ms), self.audit_sink.write(event)).await {
                Ok(written) => written.map_err(AuditWriteError::Failed),
                Err(_) => Err(AuditWriteError::TimedOut(ms)),
            },
        };
        if let Err(error) = outcome {
            if let Some(hook) = &self.on_audit_error {
                hook(event, &error);
            }
        }
    }
}

/// The requirement's resource with an omitted owner materialised from the
/// context, as authorization and audit see it.
#[must_use]
pub(crate) fn owned_resource(requirement: &Requirement, context: &AccessContext) -> ResourceRef {
    let mut resource = requirement.resource.clone();
    if resource.owner.is_none() {
        resource.owner = Some(context.owner.clone());
    }
    resource
}

/// Sets `resource` and `action` from a requirement.
pub(crate) fn with_requirement(event: &mut AuditEvent, requirement: &Requirement, context: &AccessContext) {
    event.resource = Some(owned_resource(requirement, context));
    event.action = Some(requirement.action.clone());
}
