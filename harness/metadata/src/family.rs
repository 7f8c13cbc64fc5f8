//! The rule family a case belongs to, as the manifest groups its rows.

use serde::{Deserialize, Serialize};

/// The rule family a case belongs to; decides how it is grouped and reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// SharedOS's own authority matrix.
    Matrix,
    /// The deadline drain: what a turn takes, finishes and stops near its end.
    Drain,
    /// Whether an ending offers a retry (E75–E84, W1–W22).
    Retryable,
    /// What a runtime states for the record, and where it lands.
    Annotate,
    /// The messaging rules (`docs/rules/messaging.md`, and the D rules of
    /// `docs/rules/drivers.md`).
    Messaging,
    /// Fail-closed paths SharedOS's matrix leaves out: a dependency that
    /// breaks, a call the kernel must refuse rather than work around.
    FailClosed,
    /// A live CLI's own tools, which act outside the envelope: its seat's
    /// recipe must leave its model none.
    Containment,
}

impl Family {
    /// Every family, in report order.
    pub const ALL: [Family; 7] = [
        Family::Matrix,
        Family::Drain,
        Family::Retryable,
        Family::Annotate,
        Family::Messaging,
        Family::FailClosed,
        Family::Containment,
    ];

    /// The wire spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Matrix => "matrix",
            Family::Drain => "drain",
            Family::Retryable => "retryable",
            Family::Annotate => "annotate",
            Family::Messaging => "messaging",
            Family::FailClosed => "fail_closed",
            Family::Containment => "containment",
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
