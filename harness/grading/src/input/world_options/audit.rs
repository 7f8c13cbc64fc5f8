//! Bounds of the `auditFailsAt` option.

use crate::input::error::{LoadError, Site};
use sharedos_world::options::audit::{AuditFailsAt, AuditRecord};

/// Highest call number an audit fault may name.
const MAX_CALL: u32 = 1000;

/// A call number exactly for the call records, within bounds.
pub(crate) fn check(fault: &AuditFailsAt, site: &Site<'_>) -> Result<(), LoadError> {
    match (fault.record, fault.call) {
        (AuditRecord::CatalogueListing, Some(_)) => {
            Err(site.child("call").out_of_bounds("no call number for the catalogue listing"))
        }
        (AuditRecord::CallDecision | AuditRecord::CallOutcome, None) => {
            Err(site.child("call").out_of_bounds(format!("a call number from 1 to {MAX_CALL}")))
        }
        (_, Some(n)) if !(1..=MAX_CALL).contains(&n) => {
            Err(site.child("call").out_of_bounds(format!("a call number from 1 to {MAX_CALL}")))
        }
        _ => Ok(()),
    }
}
