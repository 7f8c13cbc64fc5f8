//! The whole matrix: plan the selected cells, run them on a worker pool, and
//! put the results in canonical order before anything is written.

use super::cell::{run_cell, CellError, CellRun, Rerun, Row};
use crate::run::cache::RunCache;
use crate::run::process_seats::WorkerSeats;
use sharedos_envelope::options::DEFAULT_TIMEOUT_MS;
use sharedos_grading::column::column;
use sharedos_grading::input::case::Condition;
use sharedos_grading::input::loader::Suite;
use sharedos_grading::input::seat::ProcessScope;
use sharedos_grading::output::golden::compare;
use sharedos_grading::output::manifest::CellEvidence;
use sharedos_grading::plan::{locate, NotInSuite, PlannedCell};
use sharedos_grading::vocab::progress::{Progress, RunStart};
use sharedos_grading::vocab::CellKey;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
    /// How many times each cell of a column that does not run once runs
    /// (`--repeat`; 0 and 1 both mean once).
    pub repeat: u32,
    /// Told of each run of a cell as it starts and ends.
    pub progress: Option<&'a dyn Progress>,
}

/// How long a cell of a column on the simulated clock may take in real
/// time before it is worth showing: such a cell takes milliseconds.
const SIMULATED_CELL_EXPECTED: Duration = Duration::from_secs(5);

/// How long one run of `key` may be expected to take: on a real clock,
/// the turn's own deadline (the world's `timeoutMs`, or the envelope's
/// default); on the simulated clock, [`SIMULATED_CELL_EXPECTED`].
fn expected_time(suite: &Suite, condition: &Condition, key: &CellKey) -> Duration {
    let real_clock = suite.seats.iter().any(|seat| seat.column_id == key.column && seat.on_real_clock());
    if real_clock {
        Duration::from_millis(condition.world.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS))
    } else {
        SIMULATED_CELL_EXPECTED
    }
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
    let workers = workers(suite, planned, settings.jobs);
    let mut ran: Vec<(usize, Vec<PlannedResult>)> = match rayon::ThreadPoolBuilder::new().num_threads(workers).build() {
        Ok(pool) => pool.broadcast(|_| work()).into_iter().flatten().collect(),
        // A pool that cannot start still yields the same ordered results.
        Err(_) => work(),
    };
    ran.sort_unstable_by_key(|(index, _)| *index);
    ran.into_iter().flat_map(|(_, results)| results).collect()
}

/// How many times each cell of `column` runs when `repeat` is asked: a
/// built-in column runs once, as one run stands for any number.
#[must_use]
pub fn runs_of(suite: &Suite, column_id: &str, repeat: u32) -> u32 {
    let repeated = column(&suite.seats, column_id).is_some_and(|c| !c.kind.runs_once());
    if repeat > 1 && repeated {
        repeat
    } else {
        1
    }
}

/// How many workers [`run_all`] runs for `jobs` asked: at least one, no
/// more than rows (more would only start threads that find no work), and
/// no more than [`process_bound`].
#[must_use]
pub fn workers(suite: &Suite, planned: &[PlannedCell], jobs: usize) -> usize {
    let rows = planned.chunk_by(|a, b| a.key.case == b.key.case && a.key.condition == b.key.condition).count();
    jobs.clamp(1, rows.max(1)).min(process_bound(suite, planned))
}

/// The most workers worth running when a seat's runtime process is kept
/// for the run on the simulated clock: each worker starts its own (about
/// 0.1 s of CPU for the Python reference), and the runtime's real time is
/// all computation, so workers beyond the cores only add start-ups (on 2
/// cores, 16 workers took 5 times as long as 2). Unbounded otherwise: a
/// real-clock seat's turns wait on the world, and gain from more workers.
fn process_bound(suite: &Suite, planned: &[PlannedCell]) -> usize {
    let bound = suite.seats.iter().any(|seat| {
        seat.mcp.is_none()
            && seat.process == ProcessScope::PerRun
            && !seat.on_real_clock()
            && planned.iter().any(|p| p.declared.is_none() && p.key.column == seat.column_id)
    });
    if bound {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        usize::MAX
    }
}

/// Runs the cells of one row that are not declared, in plan order.
fn run_row(
    suite: &Suite,
    cells: &[PlannedCell],
    settings: RunSettings<'_>,
    cache: &Arc<RunCache>,
    seats: &WorkerSeats,
) -> Vec<PlannedResult> {
    let mut row: Option<(Row<'_>, &Condition)> = None;
    let mut run = |planned: &PlannedCell| -> CellResult {
        if row.is_none() {
            let (case, condition, script) = locate(suite, &planned.key)?;
            let row_of = Row::new(case, condition, Rc::new(script.clone()), cache, seats);
            row = Some((row_of.keeping_grading(settings.keep_grading), condition));
        }
        let Some((row, condition)) = &row else { return Err(NotInSuite { cell: planned.key.trial_name() }.into()) };
        let key = &planned.key;
        let runs = runs_of(suite, &key.column, settings.repeat);
        let expected = expected_time(suite, condition, key);
        let run_once = |number: u32| {
            if let Some(progress) = settings.progress {
                progress.started(RunStart { key, run: number, runs, expected });
            }
            let ran = row.run_cell(&key.column);
            if let (Some(progress), Ok(ran)) = (settings.progress, &ran) {
                progress.finished(key, number, ran.cell.status);
            }
            ran
        };
        let mut run = run_once(1)?;
        run.golden = settings.golden.map(|dir| compare(dir, &run.key, &run.snapshot));
        for number in 2..=runs {
            let again = run_once(number)?;
            let evidence = CellEvidence { repeat: Some(number), ..again.evidence };
            run.reruns.push(Rerun { cell: again.cell, evidence, grading: again.grading });
        }
        Ok(run)
    };
    cells.iter().map(|p| (p.clone(), p.declared.is_none().then(|| run(p)))).collect()
}
