//! A pre-effect audit write that failed: the one kernel rejection an abort
//! signal can also carry.

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
