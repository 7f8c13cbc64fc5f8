//! Which rows and columns produce each reason code of the closed
//! vocabulary, and why the codes no row can produce never appear.
//!
//! A code in no cell is a fail-closed path nothing exercises, so every
//! code is either seen in a cell or declared here with the reason no seat
//! can reach it; a test keeps the vocabulary, the declarations and the
//! committed manifest in step.

use crate::output::manifest::{ManifestColumn, ManifestRow, RowRef};
use serde::{Deserialize, Serialize};
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
        "only the MCP harness runtime's escalation latch decides it, and no MCP column is built yet",
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

/// One code of the vocabulary: where it was seen, or why it cannot be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodeCoverage {
    /// The code.
    pub code: String,
    /// The rows with a cell that shows it, in row order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowRef>,
    /// The columns with a cell that shows it, in column order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// Why no row can produce it, when it is declared so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
}

/// Why `code` is declared unreachable, if it is.
#[must_use]
pub fn unreachable_reason(code: ReasonCode) -> Option<&'static str> {
    UNREACHABLE_CODES.iter().find(|(declared, _)| *declared == code).map(|(_, reason)| *reason)
}

/// Every code of the vocabulary, in declaration order, with the rows and
/// columns of `rows` whose cells show it.
#[must_use]
pub fn reason_code_coverage(columns: &[ManifestColumn], rows: &[ManifestRow]) -> Vec<CodeCoverage> {
    ReasonCode::ALL
        .iter()
        .map(|code| {
            let shows = |cell: &crate::output::manifest::Cell| cell.reason_codes.iter().any(|c| c == code.as_str());
            CodeCoverage {
                code: code.as_str().to_string(),
                rows: rows.iter().filter(|row| row.cells.iter().any(shows)).map(ManifestRow::row_ref).collect(),
                columns: columns
                    .iter()
                    .filter(|column| {
                        rows.iter().flat_map(|row| &row.cells).any(|cell| cell.column_id == column.id && shows(cell))
                    })
                    .map(|column| column.id.clone())
                    .collect(),
                unreachable: unreachable_reason(*code).map(str::to_string),
            }
        })
        .collect()
}
