//! A manifest cell: a row's verdict in one column, with the counts and codes
//! it was decided from and, for a cell run more than once, every run's.

use crate::repeats::{Outcome, Repeats};
use crate::status::CellStatus;
use serde::{Deserialize, Serialize, Serializer};
use sharedos_model::audit::Source;

/// One graded (or declared) cell.
///
/// Serialised in one of two key orders, as SharedOS writes them: a run cell
/// (`turns > 0`) puts `driverIssued` after `attempted`; a cell decided
/// without running puts it after `recordGaps`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[must_use]
pub struct Cell {
    /// The column.
    pub column_id: String,
    /// The verdict.
    pub status: CellStatus,
    /// Boundaries that refused, sorted by spelling.
    pub refused_by: Vec<Source>,
    /// Codes observed, sorted and unique.
    pub reason_codes: Vec<String>,
    /// Refusals the kernel let stand rather than made; reported, not graded.
    #[serde(default)]
    pub causes: Vec<String>,
    /// Attempts the script declares.
    pub declared: u32,
    /// Attempts actually issued.
    pub attempted: u32,
    /// Driver-issued attempts actually issued, in declared order.
    pub driver_issued: Vec<String>,
    /// Attempts graded not applicable.
    pub not_applicable: u32,
    /// Whether the last turn's record is usable.
    pub record_usable: bool,
    /// Required gaps of the last turn's record.
    pub record_gaps: Vec<String>,
    /// Turns run (0 when decided without running).
    pub turns: u32,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Every run's verdict when the cell ran more than once (`--repeat`);
    /// the fields above are the first run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
}

impl Cell {
    /// True when the cell was decided without running a turn.
    #[must_use]
    pub fn is_declared(&self) -> bool {
        self.turns == 0
    }

    /// What the cell comes to under the one rule (see
    /// [`crate::repeats`]): its one run's verdict, or, run K times, pass
    /// only when every run passed, flaky when some did, fail when none did.
    pub fn outcome(&self) -> Outcome {
        self.repeats.as_ref().map_or_else(|| Outcome::of_run(self.status), Repeats::outcome)
    }

    /// Whether the cell fails a build: the exit code, the reports and
    /// `check --verdicts` all ask this.
    #[must_use]
    pub fn breaks_build(&self) -> bool {
        self.outcome().breaks_build()
    }

    /// How the cell is shown: its status label, or `pass (driver)` when the
    /// attacking call was issued by the column's driver.
    #[must_use]
    pub fn label(&self) -> String {
        let label = self.status.label();
        if self.status == CellStatus::Pass && !self.driver_issued.is_empty() {
            format!("{label} (driver)")
        } else {
            label.to_string()
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunCellWire<'a> {
    column_id: &'a str,
    status: CellStatus,
    refused_by: &'a [Source],
    reason_codes: &'a [String],
    causes: &'a [String],
    declared: u32,
    attempted: u32,
    driver_issued: &'a [String],
    not_applicable: u32,
    record_usable: bool,
    record_gaps: &'a [String],
    turns: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeats: Option<&'a Repeats>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeclaredCellWire<'a> {
    column_id: &'a str,
    status: CellStatus,
    refused_by: &'a [Source],
    reason_codes: &'a [String],
    causes: &'a [String],
    declared: u32,
    attempted: u32,
    not_applicable: u32,
    record_usable: bool,
    record_gaps: &'a [String],
    driver_issued: &'a [String],
    turns: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeats: Option<&'a Repeats>,
}

impl Serialize for Cell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_declared() {
            DeclaredCellWire {
                column_id: &self.column_id,
                status: self.status,
                refused_by: &self.refused_by,
                reason_codes: &self.reason_codes,
                causes: &self.causes,
                declared: self.declared,
                attempted: self.attempted,
                not_applicable: self.not_applicable,
                record_usable: self.record_usable,
                record_gaps: &self.record_gaps,
                driver_issued: &self.driver_issued,
                turns: self.turns,
                detail: self.detail.as_deref(),
                repeats: self.repeats.as_ref(),
            }
            .serialize(serializer)
        } else {
            RunCellWire {
                column_id: &self.column_id,
                status: self.status,
                refused_by: &self.refused_by,
                reason_codes: &self.reason_codes,
                causes: &self.causes,
                declared: self.declared,
                attempted: self.attempted,
                driver_issued: &self.driver_issued,
                not_applicable: self.not_applicable,
                record_usable: self.record_usable,
                record_gaps: &self.record_gaps,
                turns: self.turns,
                detail: self.detail.as_deref(),
                repeats: self.repeats.as_ref(),
            }
            .serialize(serializer)
        }
    }
}
