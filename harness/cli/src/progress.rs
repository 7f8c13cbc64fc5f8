//! Progress on a terminal: while `run`, `check`, `bless`, `certify` or
//! `verify` works, stderr shows each column's cells done of its total, the
//! cells running now with their elapsed time (a run past what its row may
//! be expected to take is marked slow, so a hang shows before its
//! deadline), the passes, failures and flaky cells so far, and an estimate
//! of the time left. Only when stderr is a terminal, `CI` is not set and
//! `--no-progress` is not given; it is cleared before anything is printed
//! on stdout, and no file the command writes depends on it.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use sharedos_conformance::suite::matrix::runs_of;
use sharedos_conformance_metadata::repeats::{Outcome, Repeats};
use sharedos_grading::input::loader::Suite;
use sharedos_grading::output::printable::one_line;
use sharedos_grading::plan::PlannedCell;
use sharedos_grading::vocab::progress::{Progress, RunStart};
use sharedos_grading::vocab::{CellKey, CellStatus};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How often the bars are redrawn, so elapsed times move.
const TICK: Duration = Duration::from_millis(200);

/// A column's line, the totals line and a running cell's line.
const COLUMN_TEMPLATE: &str = "{prefix:32!} [{bar:30}] {pos}/{len} cells";
const TOTAL_TEMPLATE: &str = "{prefix:32!} [{bar:30}] {pos}/{len} runs, {elapsed} so far, about {eta} left  {msg}";
const RUNNING_TEMPLATE: &str = "  {spinner} {msg} {elapsed}{slow}";

/// Whether progress is shown: stderr is a terminal, `CI` is not set, and
/// `--no-progress` was not given.
#[must_use]
pub fn wanted(no_progress: bool) -> bool {
    !no_progress && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// What a command will run: each column's cells, and runs of every cell.
#[derive(Debug, Default)]
pub struct Plan {
    /// Cells to run, by column, in the order they are shown.
    pub columns: Vec<(String, u64)>,
    /// Runs of every cell, all columns together.
    pub runs: u64,
}

impl Plan {
    /// The plan of `planned` cells, each of a repeated column run `repeat`
    /// times: the cells decided without running are not shown.
    #[must_use]
    pub fn of(suite: &Suite, planned: &[PlannedCell], repeat: u32) -> Plan {
        let mut plan = Plan::default();
        for cell in planned.iter().filter(|cell| cell.declared.is_none()) {
            let column = &cell.key.column;
            match plan.columns.iter_mut().find(|(id, _)| id == column) {
                Some((_, cells)) => *cells += 1,
                None => plan.columns.push((column.clone(), 1)),
            }
            plan.runs += u64::from(runs_of(suite, column, repeat));
        }
        plan
    }

    /// Cells to run, all columns together.
    #[must_use]
    pub fn cells(&self) -> u64 {
        self.columns.iter().map(|(_, cells)| cells).sum()
    }
}

/// Cells ended, by what their runs came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: usize,
    failed: usize,
    flaky: usize,
}

impl Tally {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Flaky => self.flaky += 1,
        }
    }

    fn line(self) -> String {
        format!("passed {}  failed {}  flaky {}", self.passed, self.failed, self.flaky)
    }
}

/// The bars on the terminal, and what they are drawn from.
#[derive(Debug)]
pub struct Shown {
    multi: MultiProgress,
    total: ProgressBar,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Each column's bar.
    columns: BTreeMap<String, ProgressBar>,
    /// Each running run's bar, and how many runs its cell has.
    running: BTreeMap<(CellKey, u32), (ProgressBar, u32)>,
    /// Each cell's runs so far, until its last ends.
    runs: BTreeMap<CellKey, Vec<CellStatus>>,
    tally: Tally,
}

impl Shown {
    /// Draws the bars for `plan` on stderr; an empty plan is drawn once
    /// the work is known ([`Progress::begin`]).
    #[must_use]
    pub fn new(plan: &Plan) -> Shown {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let total = multi.add(
            ProgressBar::new(0)
                .with_style(bar_style(TOTAL_TEMPLATE))
                .with_prefix("all columns")
                .with_message(Tally::default().line()),
        );
        total.enable_steady_tick(TICK);
        let shown = Shown { multi, total, state: Mutex::new(State::default()) };
        if plan.runs > 0 {
            shown.begin(&plan.columns, plan.runs);
        }
        shown
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes every bar from the terminal, before the command prints.
    pub fn clear(&self) {
        let state = self.state();
        state.running.values().for_each(|(bar, _)| bar.finish_and_clear());
        state.columns.values().for_each(ProgressBar::finish_and_clear);
        self.total.finish_and_clear();
        let _ = self.multi.clear();
    }
}

fn bar_style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()).progress_chars("=> ")
}

/// A running run's line: the cell, which run, and `SLOW` once it has run
/// longer than `expected`.
fn running_style(expected: Duration) -> ProgressStyle {
    let slow = move |state: &ProgressState, out: &mut dyn std::fmt::Write| {
        let _ = out.write_str(&slow_note(state.elapsed(), expected));
    };
    ProgressStyle::with_template(RUNNING_TEMPLATE)
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .with_key("slow", slow)
}

/// What a running line adds once its run is past what it was expected to
/// take.
#[must_use]
pub fn slow_note(elapsed: Duration, expected: Duration) -> String {
    if elapsed > expected {
        format!("  SLOW: past the {} s it was expected to take", expected.as_secs_f64())
    } else {
        String::new()
    }
}

/// A running run's name: the cell, and which run when it has several.
fn running_name(start: &RunStart<'_>) -> String {
    let name = one_line(&start.key.trial_name()).into_owned();
    if start.runs > 1 {
        format!("{name} (run {} of {})", start.run, start.runs)
    } else {
        name
    }
}

/// What a cell's runs come to, under the one rule the exit code reads.
fn outcome_of(statuses: Vec<CellStatus>) -> Outcome {
    match statuses.as_slice() {
        [only] => Outcome::of_run(*only),
        _ => Repeats::of_runs(statuses).map_or(Outcome::Fail, |r| Outcome::of_sample(r.passes, r.runs)),
    }
}

impl Progress for Shown {
    fn begin(&self, columns: &[(String, u64)], runs: u64) {
        let mut state = self.state();
        for (column, cells) in columns {
            let bar = ProgressBar::new(*cells)
                .with_style(bar_style(COLUMN_TEMPLATE))
                .with_prefix(one_line(column).into_owned());
            let bar = self.multi.insert_before(&self.total, bar);
            bar.tick();
            state.columns.insert(column.clone(), bar);
        }
        self.total.set_length(runs);
    }

    fn started(&self, start: RunStart<'_>) {
        let bar =
            ProgressBar::new_spinner().with_style(running_style(start.expected)).with_message(running_name(&start));
        let bar = self.multi.insert_before(&self.total, bar);
        bar.enable_steady_tick(TICK);
        self.state().running.insert((start.key.clone(), start.run), (bar, start.runs));
    }

    fn finished(&self, key: &CellKey, run: u32, status: CellStatus) {
        let mut state = self.state();
        let runs = match state.running.remove(&(key.clone(), run)) {
            Some((bar, runs)) => {
                bar.finish_and_clear();
                self.multi.remove(&bar);
                runs
            }
            None => 1,
        };
        self.total.inc(1);
        let statuses = state.runs.entry(key.clone()).or_default();
        statuses.push(status);
        // A cell has ended with its last run.
        if u32::try_from(statuses.len()).unwrap_or(u32::MAX) >= runs {
            let statuses = state.runs.remove(key).unwrap_or_default();
            state.tally.add(outcome_of(statuses));
            self.total.set_message(state.tally.line());
            if let Some(bar) = state.columns.get(&key.column) {
                bar.inc(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{outcome_of, running_name, slow_note};
    use sharedos_conformance_metadata::repeats::Outcome;
    use sharedos_grading::vocab::progress::RunStart;
    use sharedos_grading::vocab::CellKey;
    use sharedos_grading::vocab::CellStatus::{Fail, Pass};
    use std::time::Duration;

    #[test]
    fn a_run_past_what_it_was_expected_to_take_is_shown_slow() {
        let expected = Duration::from_secs(5);
        assert_eq!(slow_note(Duration::from_millis(4_900), expected), "");
        assert_eq!(slow_note(expected, expected), "");
        assert_eq!(slow_note(Duration::from_millis(5_001), expected), "  SLOW: past the 5 s it was expected to take");
        assert_eq!(
            slow_note(Duration::from_secs(11), Duration::from_millis(10_500)),
            "  SLOW: past the 10.5 s it was expected to take"
        );
    }

    #[test]
    fn a_cell_name_with_controls_is_drawn_escaped() {
        let key = CellKey { case: "a\u{1b}[2K\rb".into(), condition: "c\u{202e}".into(), column: "col".into() };
        let start = RunStart { key: &key, run: 2, runs: 3, expected: Duration::from_secs(5) };
        assert_eq!(running_name(&start), "a\\u001b[2K\\u000db/c\\u202e/col (run 2 of 3)");
    }

    #[test]
    fn the_tally_reads_a_cells_runs_by_the_one_rule() {
        assert_eq!(outcome_of(vec![Pass]), Outcome::Pass);
        assert_eq!(outcome_of(vec![Fail]), Outcome::Fail);
        assert_eq!(outcome_of(vec![Fail, Fail, Pass]), Outcome::Flaky);
        assert_eq!(outcome_of(vec![Pass, Fail]), Outcome::Flaky);
        assert_eq!(outcome_of(vec![Pass, Pass]), Outcome::Pass);
        assert_eq!(outcome_of(vec![Fail, Fail]), Outcome::Fail);
    }
}
