//! The reason codes of the closed vocabulary no row can produce, and why.
//!
//! A code in no cell is a fail-closed path nothing exercises, so the
//! manifest's coverage lists every code as seen in a cell or declared here
//! with the reason no seat can reach it; a test keeps the vocabulary, the
//! declarations and the committed manifest in step.

use sharedos_model::codes::ReasonCode;

const NO_RESOURCE_PORT: &str =
    "the reference kernel has no resource port (`invokeResource` is not implemented), so nothing can decide it";

/// Codes no row can produce, each with the reason.
pub const UNREACHABLE_CODES: &[(ReasonCode, &str)] = &[
    (
        ReasonCode::Allowed,
        "a decision's code, never a refusal: the audit trail's decisions carry it, no receipt or ending does",
    ),
    (
        ReasonCode::InvalidContext,
        "the envelope refuses a malformed context before the kernel sees it, and the loader range-checks every \
         instant a world can be given, so no turn reaches the kernel with one",
    ),
    (ReasonCode::ResourceProviderNotFound, NO_RESOURCE_PORT),
    (ReasonCode::ResourceExecutionFailed, NO_RESOURCE_PORT),
    (ReasonCode::InvalidResourceResult, NO_RESOURCE_PORT),
    (
        ReasonCode::MessageRequestNotPrepared,
        "the kernel prepares the envelope of every `messages.request` it invokes; only a host calling the \
         handler directly, outside `invokeTool`, could reach it",
    ),
    (
        ReasonCode::EscalationPending,
        "only the MCP runtime's escalation latch decides it, answering a call made after the ask itself: the call \
         never reaches the envelope, so no record shows it (`callsAfterEscalation` counts it; D46 and the MCP \
         interop tests check it on the wire)",
    ),
    (
        ReasonCode::AuditWriteTimeout,
        "a post-effect audit write that times out goes to the host's audit-error hook only: no result, record \
         or receipt carries it",
    ),
    (
        ReasonCode::OperationAborted,
        "written only to the audit trail of a call cut off mid-flight; its receipt reads `interrupted`, the \
         rejection the drain rows grade",
    ),
];

/// Why `code` is declared unreachable, if it is.
#[must_use]
pub fn unreachable_reason(code: ReasonCode) -> Option<&'static str> {
    UNREACHABLE_CODES.iter().find(|(declared, _)| *declared == code).map(|(_, reason)| *reason)
}
