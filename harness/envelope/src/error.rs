//! Errors: construction, request schema, host-call rejections and the
//! contained throws handed to `on_turn_error`.

use sharedos_model::validate::ValidationError;
use sharedos_port::audit::AuditUnavailable;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortReason;

/// The executor could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstructionError {
    /// The runtime's manifest broke the schema.
    #[error("accept the runtime manifest: {0}")]
    InvalidManifest(ValidationError),
    /// A numeric option was out of range.
    #[error("accept option {option}: expected {expected}")]
    InvalidOption {
        /// The option's SharedOS name.
        option: String,
        /// What it must be.
        expected: String,
    },
}

/// `execute` rejected without running a turn (no result, no audit).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecuteError {
    /// The request failed the ExecutionRequest schema.
    #[error("accept the execution request: {0}")]
    InvalidRequest(ValidationError),
}

/// Why a runtime's call on its host was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// The turn has closed or its hard signal fired.
    #[error("use the runtime host: it is closed")]
    Closed,
    /// The tool call broke the ToolCall schema.
    #[error("accept the tool call: {0}")]
    InvalidCall(ValidationError),
    /// The declared step was not a non-negative integer.
    #[error("accept the declared step: expected a non-negative integer")]
    InvalidStep,
    /// The runtime event broke the RuntimeEvent schema.
    #[error("accept the runtime event: {0}")]
    InvalidEvent(ValidationError),
    /// The annotation key is empty, `runtime` or `__proto__`.
    #[error("accept the annotation key {0:?}")]
    InvalidAnnotationKey(String),
    /// The annotation value is not a JSON value.
    #[error("accept the annotation value: {0}")]
    InvalidAnnotationValue(String),
    /// The kernel's answer was not a valid tool result.
    #[error("accept the kernel's tool result: {0}")]
    InvalidToolResult(ValidationError),
    /// The kernel rejected the call.
    #[error(transparent)]
    Kernel(KernelError),
    /// The turn's hard signal fired while the call was with the kernel.
    #[error("finish the tool call before the turn stopped: {0:?}")]
    Aborted(AbortReason),
}

/// A contained throw, as `on_turn_error` receives it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TurnError {
    /// The runtime threw (including a forged audit outage).
    #[error(transparent)]
    Runtime(RuntimeFailure),
    /// A kernel port threw something other than an outage or an abort.
    #[error(transparent)]
    Kernel(KernelError),
    /// The turn met a pre-effect audit outage; the sink's error is its cause.
    #[error(transparent)]
    AuditUnavailable(AuditUnavailable),
}

/// What a runtime threw. The envelope never reads its content to decide an
/// ending; it is only handed to `on_turn_error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuntimeFailure {
    /// Any error of the runtime's own.
    #[error("run the turn: {0}")]
    Message(String),
    /// An audit outage the runtime raised itself; credited `runtime_failed`
    /// because only outages the envelope saw from the kernel count.
    #[error(transparent)]
    AuditUnavailable(AuditUnavailable),
    /// A host call's rejection, passed on.
    #[error(transparent)]
    Host(HostError),
}

impl RuntimeFailure {
    /// A failure with a message.
    #[must_use]
    pub fn message(text: impl Into<String>) -> RuntimeFailure {
        RuntimeFailure::Message(text.into())
    }
}

impl From<HostError> for RuntimeFailure {
    fn from(error: HostError) -> RuntimeFailure {
        RuntimeFailure::Host(error)
    }
}
