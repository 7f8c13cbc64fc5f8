//! Retry bookkeeping and the audit-outage latch.
//!
//! A call counts when its tool, as the kernel listed it this turn, is a
//! non-idempotent write. The turn is safe to retry while no counted call
//! could have had an effect and none is still with the kernel.

use sharedos_model::tool::{ToolResult, ToolStatus};
use sharedos_model::validate::Validate;
use sharedos_port::audit::{AuditEffect, AuditUnavailable};
use sharedos_port::error::KernelError;
use std::cell::{Cell, RefCell};

/// Per-turn ledger of possible effects plus the first outage seen.
#[derive(Debug, Default)]
pub struct RetryLedger {
    effect_possible: Cell<bool>,
    writes_with_kernel: Cell<u32>,
    outage: RefCell<Option<AuditUnavailable>>,
}

impl RetryLedger {
    /// An empty ledger.
    #[must_use]
    pub fn new() -> RetryLedger {
        RetryLedger::default()
    }

    /// Whether a retry could not repeat an effect.
    #[must_use]
    pub fn safe_to_retry(&self) -> bool {
        !self.effect_possible.get() && self.writes_with_kernel.get() == 0
    }

    /// A counted call was handed to the kernel.
    pub fn write_sent(&self) {
        self.writes_with_kernel.set(self.writes_with_kernel.get() + 1);
    }

    /// A counted call's kernel future answered `result`.
    pub fn write_answered(&self, result: &ToolResult) {
        self.writes_with_kernel.set(self.writes_with_kernel.get().saturating_sub(1));
        let proven_denied = result.validate().is_ok() && result.status() == ToolStatus::Denied;
        if !proven_denied {
            self.effect_possible.set(true);
        }
    }

    /// A counted call's kernel future rejected with `error`; `hard_aborted`
    /// is whether the turn's hard signal had fired at that moment.
    pub fn write_rejected(&self, error: &KernelError, hard_aborted: bool) {
        self.writes_with_kernel.set(self.writes_with_kernel.get().saturating_sub(1));
        let refused_before_port =
            matches!(error, KernelError::AuditUnavailable(AuditUnavailable { effect: AuditEffect::None, .. }))
                && !hard_aborted;
        if !refused_before_port {
            self.effect_possible.set(true);
        }
    }

    /// Latches the first outage the envelope saw on a kernel future.
    /// Returns true when `error` is the latched outage.
    pub fn watch(&self, error: &KernelError) -> bool {
        let KernelError::AuditUnavailable(outage) = error else { return false };
        let mut latched = self.outage.borrow_mut();
        if latched.is_none() {
            *latched = Some(outage.clone());
        }
        latched.as_ref() == Some(outage)
    }

    /// The latched outage.
    #[must_use]
    pub fn outage(&self) -> Option<AuditUnavailable> {
        self.outage.borrow().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_with_the_kernel_makes_a_retry_unsafe_until_it_answers() {
        let ledger = RetryLedger::new();
        assert!(ledger.safe_to_retry());
        ledger.write_sent();
        assert!(!ledger.safe_to_retry(), "a write in flight could still take effect");
    }
}
