//! Ways a kernel operation can reject instead of answering.

use crate::signal::AbortReason;

/// Whether anything ran before a pre-effect audit write failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditEffect {
    /// Nothing ran: the refusal came before any port was entered.
    None,
    /// A port had been entered (e.g. a handler calling back into the kernel).
    Unknown,
}

/// A pre-effect audit write failed, so the operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("write a pre-effect audit record: {cause}")]
pub struct AuditUnavailable {
    /// Whether anything ran.
    pub effect: AuditEffect,
    /// The sink's own error (host-only).
    pub cause: String,
}

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
