//! Which cells a run holds: the selection a user asks for, and the plan
//! that decides, before anything runs, the cells that are not run (a case
//! not implemented, a row a column cannot carry).

use crate::column::{columns, ColumnSpec};
use crate::grade::judge::cell::{declared_cell, Cell};
use crate::input::case::{Case, Condition};
use crate::input::loader::Suite;
use crate::input::script::AttackScript;
use crate::vocab::{CellKey, CellStatus};
use shard::Shard;

pub mod shard;

/// Which cells to consider; an empty list selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Case ids.
    pub cases: Vec<String>,
    /// Column ids.
    pub columns: Vec<String>,
    /// Family names.
    pub families: Vec<String>,
    /// Only the rows of this part of the run (all rows when `None`).
    pub shard: Option<Shard>,
}

impl Selection {
    /// Whether `case` is selected (by id and by family).
    #[must_use]
    pub fn keeps_case(&self, case: &Case) -> bool {
        (self.cases.is_empty() || self.cases.contains(&case.id))
            && (self.families.is_empty() || self.families.iter().any(|f| f == case.family.as_str()))
    }

    fn keeps_column(&self, column: &ColumnSpec) -> bool {
        self.columns.is_empty() || self.columns.contains(&column.id)
    }

    /// The selected columns of `suite` (its seats included), in manifest order.
    #[must_use]
    pub fn columns(&self, suite: &Suite) -> Vec<ColumnSpec> {
        columns(&suite.seats).into_iter().filter(|c| self.keeps_column(c)).collect()
    }
}

/// One planned cell: run it, or decide it without running.
#[derive(Debug, Clone)]
pub struct PlannedCell {
    /// Which cell.
    pub key: CellKey,
    /// `Some` when the cell is decided without running.
    pub declared: Option<Cell>,
}

/// Plans the selected cells in canonical order (case, condition, column
/// order); with a shard, only its rows, numbered among the selected rows.
#[must_use]
pub fn plan(suite: &Suite, selection: &Selection) -> Vec<PlannedCell> {
    let columns = selection.columns(suite);
    let cases = || suite.cases.iter().filter(|c| selection.keeps_case(c));
    let mut planned = Vec::with_capacity(cases().map(|c| c.conditions.len()).sum::<usize>() * columns.len());
    let mut row = 0;
    for case in cases() {
        let script = suite.scripts.get(&case.adversary);
        let declared_attempts = script.map_or(0, |s| u32::try_from(s.attempts.len()).unwrap_or(u32::MAX));
        for condition in &case.conditions {
            row += 1;
            if selection.shard.is_some_and(|shard| !shard.keeps_row(row - 1)) {
                continue;
            }
            for column in &columns {
                let key =
                    CellKey { case: case.id.clone(), condition: condition.id.clone(), column: column.id.to_string() };
                let unsupported = script.and_then(|s| column.kind.limits(s, condition).unsupported);
                let declared = match (&case.not_implemented, unsupported) {
                    (Some(reason), _) => {
                        Some(declared_cell(&column.id, CellStatus::NotImplemented, declared_attempts, reason))
                    }
                    (None, Some(reason)) => {
                        Some(declared_cell(&column.id, CellStatus::NotApplicable, declared_attempts, &reason))
                    }
                    (None, None) => None,
                };
                planned.push(PlannedCell { key, declared });
            }
        }
    }
    planned
}

/// A planned cell names a case, condition or script its suite lacks (a
/// plan, or a bundle, from another suite).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("find cell {cell} in the suite")]
pub struct NotInSuite {
    /// `case/condition/column`.
    pub cell: String,
}

/// The case, condition and script a planned cell names.
///
/// # Errors
/// When the suite lacks one of them.
pub fn locate<'s>(suite: &'s Suite, key: &CellKey) -> Result<(&'s Case, &'s Condition, &'s AttackScript), NotInSuite> {
    let missing = || NotInSuite { cell: key.trial_name() };
    let case = suite.case(&key.case).ok_or_else(missing)?;
    let condition = case.condition(&key.condition).ok_or_else(missing)?;
    let script = suite.script_for(case).ok_or_else(missing)?;
    Ok((case, condition, script))
}
