//! Ways a kernel operation can reject instead of answering.

use crate::audit::AuditUnavailable;
use crate::signal::AbortReason;

/// A kernel operation that rejected rather than answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// The caller's signal fired.
    #[error("finish before the signal fired: {0:?}")]
    Aborted(AbortReason),
    /// A pre-effect audit write failed.
    #[error(transparent)]
    AuditUnavailable(#[from] AuditUnavailable),
    /// A host port threw something other than an outage or an abort.
    #[error("reach a host port: {0}")]
    Port(String),
    /// The input broke the contract (a thrown type error in SharedOS).
    #[error("accept the input: {0}")]
    InvalidInput(String),
}
