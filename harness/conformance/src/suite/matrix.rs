//! The whole matrix: plan the selected cells, run them on a worker pool, and
//! put the results in canonical order before anything is written.

use super::cell::{run_cell, CellError, CellRun, Row};
use crate::grade::judge::cell::declared_cell;
use crate::grade::judge::cell::Cell;
use crate::input::case::{Case, Condition};
use crate::input::loader::Suite;
use crate::input::script::AttackScript;
use crate::output::golden::compare;
use crate::run::cache::RunCache;
use crate::run::column::{columns, ColumnSpec};
use crate::run::process_seats::WorkerSeats;
use crate::vocab::{CellKey, CellStatus};
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Which cells to consider; an empty list selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Case ids.
    pub cases: Vec<String>,
    /// Column ids.
    pub columns: Vec<String>,
    /// Family names.
    pub families: Vec<String>,
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

/// Plans the selected cells in canonical order (case, condition, column order).
#[must_use]
pub fn plan(suite: &Suite, selection: &Selection) -> Vec<PlannedCell> {
    let columns = selection.columns(suite);
    let cases = || suite.cases.iter().filter(|c| selection.keeps_case(c));
    let mut planned = Vec::with_capacity(cases().map(|c| c.conditions.len()).sum::<usize>() * columns.len());
    for case in cases() {
        let script = suite.scripts.get(&case.adversary);
        let declared_attempts = script.map_or(0, |s| u32::try_from(s.attempts.len()).unwrap_or(u32::MAX));
        for condition in &case.conditions {
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

/// A cell's result: graded, or a harness error that stopped it.
pub type CellResult = Result<CellRun, CellError>;

/// Runs one planned cell that is not declared.
///
/// # Errors
/// When the cell cannot be run.
pub fn run_planned(suite: &Suite, planned: &PlannedCell) -> CellResult {
    let (case, condition, script) = locate(suite, &planned.key)?;
    run_cell(case, condition, &Rc::new(script.clone()), &suite.seats, &planned.key.column)
}

/// The case, condition and script a planned cell names.
///
/// # Errors
/// When the suite lacks one of them (a plan from another suite).
pub fn locate<'s>(suite: &'s Suite, key: &CellKey) -> Result<(&'s Case, &'s Condition, &'s AttackScript), CellError> {
    let missing = || CellError::NotInSuite { cell: key.trial_name() };
    let case = suite.case(&key.case).ok_or_else(missing)?;
    let condition = case.condition(&key.condition).ok_or_else(missing)?;
    let script = suite.script_for(case).ok_or_else(missing)?;
    Ok((case, condition, script))
}

/// A planned cell with its result, `None` when it was declared.
pub type PlannedResult = (PlannedCell, Option<CellResult>);

/// How [`run_all`] runs the planned cells.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunSettings<'a> {
    /// Worker threads (at least one, at most one per row, is used).
    pub jobs: usize,
    /// Where golden files are, to compare each snapshot with on the worker
    /// that made it.
    pub golden: Option<&'a Path>,
    /// Whether each run cell keeps what it was graded from (certification
    /// needs it; a plain run would only hold it in memory).
    pub keep_grading: bool,
}

/// Runs every planned cell that needs running on `settings.jobs` worker
/// threads, a row (case × condition) at a time so its columns share what
/// does not depend on the column. Results come back in plan order whatever
/// the scheduling.
#[must_use]
pub fn run_all(suite: &Suite, planned: &[PlannedCell], settings: RunSettings<'_>) -> Vec<PlannedResult> {
    let rows: Vec<&[PlannedCell]> =
        planned.chunk_by(|a, b| a.key.case == b.key.case && a.key.condition == b.key.condition).collect();
    // The workers share the run's one cache; a worker takes the next row
    // not yet taken, and the results are put back in row order.
    let cache = Arc::new(RunCache::default());
    let next = AtomicUsize::new(0);
    let work = || {
        // Each worker starts its own process for each seat, on first use.
        let seats = WorkerSeats::new(&suite.seats);
        let mut ran = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(row) = rows.get(index) else { break };
            ran.push((index, run_row(suite, row, settings, &cache, &seats)));
        }
        ran
    };
    // More workers than rows would only start threads that find no work.
    let workers = settings.jobs.clamp(1, rows.len().max(1));
    let mut ran: Vec<(usize, Vec<PlannedResult>)> = match rayon::ThreadPoolBuilder::new().num_threads(workers).build() {
        Ok(pool) => pool.broadcast(|_| work()).into_iter().flatten().collect(),
        // A pool that cannot start still yields the same ordered results.
        Err(_) => work(),
    };
    ran.sort_unstable_by_key(|(index, _)| *index);
    ran.into_iter().flat_map(|(_, results)| results).collect()
}

/// Runs the cells of one row that are not declared, in plan order.
fn run_row(
    suite: &Suite,
    cells: &[PlannedCell],
    settings: RunSettings<'_>,
    cache: &Arc<RunCache>,
    seats: &WorkerSeats,
) -> Vec<PlannedResult> {
    let mut row: Option<Row<'_>> = None;
    let mut run = |planned: &PlannedCell| -> CellResult {
        if row.is_none() {
            let (case, condition, script) = locate(suite, &planned.key)?;
            let row_of = Row::new(case, condition, Rc::new(script.clone()), cache, seats);
            row = Some(row_of.keeping_grading(settings.keep_grading));
        }
        let mut run = match &row {
            Some(row) => row.run_cell(&planned.key.column)?,
            None => return Err(CellError::NotInSuite { cell: planned.key.trial_name() }),
        };
        run.golden = settings.golden.map(|dir| compare(dir, &run.key, &run.snapshot));
        Ok(run)
    };
    cells.iter().map(|p| (p.clone(), p.declared.is_none().then(|| run(p)))).collect()
}
