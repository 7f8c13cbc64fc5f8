//! A cell's verdict, and the version of the rules that decide it: words the
//! baseline, the identity hashes, the judge and the manifest all speak.

use serde::{Deserialize, Serialize};

/// The version of this harness's grading rules.
pub const RULES_VERSION: &str = "7";

/// The SharedOS judge version whose semantics [`RULES_VERSION`] adopts.
pub const ADOPTED_JUDGE_VERSION: &str = "6";

/// A cell's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[must_use]
pub enum CellStatus {
    /// Every declared attempt met its expectation, every control succeeded,
    /// and the turn ended as expected when the row grades the ending.
    Pass,
    /// An attempt missed its expectation, the record a row depends on is
    /// unusable, or a turn asked for its ending and ended otherwise.
    Fail,
    /// Something the row needs never happened (an attack never reached
    /// SharedOS, a control did not succeed, an ending was never asked for):
    /// evidence of nothing, and never a pass.
    NotExercised,
    /// The runtime structurally cannot make the row's attempts (declared by
    /// the script or the column, or the turn was refused before it started).
    NotApplicable,
    /// SharedOS does not provide what the row is about; declared, never run.
    NotImplemented,
    /// Run and recorded, but SharedOS declares no guarantee on this path in
    /// this column; kept out of pass and fail counts.
    OutOfScope,
}

impl CellStatus {
    /// Every status, in declaration order.
    pub const ALL: [CellStatus; 6] = [
        CellStatus::Pass,
        CellStatus::Fail,
        CellStatus::NotExercised,
        CellStatus::NotApplicable,
        CellStatus::NotImplemented,
        CellStatus::OutOfScope,
    ];

    /// The wire spelling (`not_exercised`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Pass => "pass",
            CellStatus::Fail => "fail",
            CellStatus::NotExercised => "not_exercised",
            CellStatus::NotApplicable => "not_applicable",
            CellStatus::NotImplemented => "not_implemented",
            CellStatus::OutOfScope => "out_of_scope",
        }
    }

    /// The spelling for people (`not exercised`).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            CellStatus::Pass => "pass",
            CellStatus::Fail => "fail",
            CellStatus::NotExercised => "not exercised",
            CellStatus::NotApplicable => "not applicable",
            CellStatus::NotImplemented => "not implemented",
            CellStatus::OutOfScope => "out of scope",
        }
    }

    /// True for the statuses that fail a build: `fail` and `not_exercised`.
    /// Standing results (not implemented, out of scope) never do, so deleting
    /// a row is never the way to a green build.
    #[must_use]
    pub fn breaks_build(self) -> bool {
        matches!(self, CellStatus::Fail | CellStatus::NotExercised)
    }
}

impl std::fmt::Display for CellStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
