//! What a run reports, as one ordered stream of events that every reporter
//! (human, JSON Lines, JUnit) renders: `Started`, one `Cell` per run or
//! declared cell in canonical order (case, condition, column), one `Drift`
//! per way the files disagree with the run, then `Finished` with the
//! totals. The order does not depend on `--jobs`.

use crate::suite::cell::CellRun;
use crate::suite::lifecycle::GoldenState;
use crate::suite::report::Report;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::input::baseline::{Baseline, BaselineVerdict};
use sharedos_grading::vocab::CellKey;
use std::collections::BTreeMap;

/// Cells per column and status, both sorted.
pub type Summary = BTreeMap<String, BTreeMap<String, usize>>;

/// One event of a run's report.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent<'a> {
    /// The run began grading this many cells.
    Started {
        /// Cells selected.
        selected: usize,
    },
    /// One cell's verdict.
    Cell(CellEvent<'a>),
    /// One way the files disagree with the run.
    Drift(&'a str),
    /// The run's totals.
    Finished(Totals),
}

/// One cell as reported.
#[derive(Debug, Clone, PartialEq)]
pub struct CellEvent<'a> {
    /// Its name.
    pub key: CellKey,
    /// The graded (or declared) cell.
    pub cell: &'a Cell,
    /// How it compares with its golden file; `None` for a declared cell.
    pub golden: Option<&'a GoldenState>,
    /// What the baseline says of it, given what its runs come to under
    /// the one rule ([`Cell::outcome`]).
    pub baseline: BaselineVerdict<'a>,
    /// Every run's graded cell, the first first, when the cell was run
    /// (none for a declared cell): a repeated cell's later findings.
    pub runs: Vec<&'a Cell>,
}

/// A run's totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Totals {
    /// Cells per column and status.
    pub summary: Summary,
    /// Cells that fail the run.
    pub failing: usize,
    /// Failures the baseline accepts.
    pub known_failures: usize,
    /// Baseline entries for cells that no longer fail.
    pub stale: usize,
    /// Drift entries.
    pub drift: usize,
    /// Per column whose cells ran more than once (`--repeat`): their
    /// pass^k, pass@k and flaky counts.
    pub repeated: BTreeMap<String, RepeatTotals>,
}

/// A repeated column's cells, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepeatTotals {
    /// Repeated cells.
    pub cells: usize,
    /// Runs per cell (the most any cell had).
    pub runs: u32,
    /// Cells every run of which passed (pass^k).
    pub pass_all: usize,
    /// Cells some run of which passed (pass@k).
    pub pass_any: usize,
    /// Cells some runs of which passed and some did not.
    pub flaky: usize,
}

impl RepeatTotals {
    /// In words, as the human report prints it after the column's id.
    #[must_use]
    pub fn summary(&self) -> String {
        let k = self.runs;
        format!(
            "{} cells run {k}x: pass^{k}: {}  pass@{k}: {}  flaky: {}",
            self.cells, self.pass_all, self.pass_any, self.flaky
        )
    }
}

/// Every event of one run, in order.
#[must_use]
pub fn run_events<'a>(
    report: &'a Report,
    golden: &'a BTreeMap<String, GoldenState>,
    drift: &'a [String],
    baseline: &'a Baseline,
) -> Vec<RunEvent<'a>> {
    let runs: BTreeMap<&CellKey, &CellRun> = report.cells.iter().map(|run| (&run.key, run)).collect();
    let cells: Vec<CellEvent<'a>> = report
        .manifest
        .rows
        .iter()
        .flat_map(|row| row.cells.iter().map(move |cell| (row.key_of(cell), cell)))
        .map(|(key, cell)| CellEvent {
            golden: golden.get(&key.trial_name()),
            baseline: baseline.verdict(&key, cell.outcome()),
            runs: runs.get(&key).map(|run| run.runs().map(|(cell, _, _)| cell).collect()).unwrap_or_default(),
            key,
            cell,
        })
        .collect();
    let totals = Totals {
        summary: summary(&cells),
        failing: cells.iter().filter(|c| baseline.fails_run(&c.key, c.cell.outcome())).count(),
        known_failures: cells.iter().filter(|c| matches!(c.baseline, BaselineVerdict::KnownFailure { .. })).count(),
        stale: cells.iter().filter(|c| matches!(c.baseline, BaselineVerdict::Stale { .. })).count(),
        drift: drift.len(),
        repeated: repeat_totals(cells.iter().map(|c| c.cell)),
    };
    let mut events = Vec::with_capacity(cells.len() + drift.len() + 2);
    events.push(RunEvent::Started { selected: cells.len() });
    events.extend(cells.into_iter().map(RunEvent::Cell));
    events.extend(drift.iter().map(|entry| RunEvent::Drift(entry.as_str())));
    events.push(RunEvent::Finished(totals));
    events
}

/// The repeated cells among `cells`, counted by column.
pub fn repeat_totals<'a>(cells: impl IntoIterator<Item = &'a Cell>) -> BTreeMap<String, RepeatTotals> {
    let mut totals: BTreeMap<String, RepeatTotals> = BTreeMap::new();
    for (cell, repeats) in cells.into_iter().filter_map(|c| c.repeats.as_ref().map(|r| (c, r))) {
        let column = totals.entry(cell.column_id.clone()).or_default();
        column.cells += 1;
        column.runs = column.runs.max(repeats.runs);
        column.pass_all += usize::from(repeats.pass_all);
        column.pass_any += usize::from(repeats.pass_any);
        column.flaky += usize::from(repeats.is_flaky());
    }
    totals
}

fn summary(cells: &[CellEvent<'_>]) -> Summary {
    let mut counts = Summary::new();
    for event in cells {
        let column = counts.entry(event.cell.column_id.clone()).or_default();
        *column.entry(event.cell.status.as_str().to_string()).or_default() += 1;
    }
    counts
}
