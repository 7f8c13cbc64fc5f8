//! An audit sink that fails one chosen pre-effect or post-effect write (and
//! every later write of the same type): the decision of a call, the
//! catalogue listing, or a call's outcome record.

use crate::audit_log::RecordingAudit;
use serde::{Deserialize, Serialize};
use sharedos_model::audit::AuditType;

/// Which audit write fails first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditRecord {
    /// The `authorization.checked` record of the call numbered `call`
    /// (counting calls that reach the kernel; admission's own decision comes
    /// first and is not a call). Pre-effect: the call cannot run.
    CallDecision,
    /// The `tool.catalog.listed` record of the turn's listing. Pre-effect:
    /// the turn cannot open.
    CatalogueListing,
    /// The `call`-th `tool.invoked` record (kernel outcomes and envelope
    /// refusals alike). Post-effect: the turn goes on.
    CallOutcome,
}

/// Fail an audit write chosen by record type and call number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditFailsAt {
    /// The record type.
    pub record: AuditRecord,
    /// The call (1-based) for call records; absent for the listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
}

impl AuditFailsAt {
    /// The record type and its 1-based write number within that type.
    #[must_use]
    pub fn write(&self) -> (AuditType, u64) {
        let call = u64::from(self.call.unwrap_or(1));
        match self.record {
            // Admission writes the turn's first decision.
            AuditRecord::CallDecision => (AuditType::AuthorizationChecked, call + 1),
            AuditRecord::CatalogueListing => (AuditType::ToolCatalogListed, 1),
            AuditRecord::CallOutcome => (AuditType::ToolInvoked, call),
        }
    }

    /// Arms the sink.
    pub fn arm(&self, audit: &RecordingAudit) {
        let (kind, nth) = self.write();
        audit.fail_from_nth(kind, nth);
    }
}
