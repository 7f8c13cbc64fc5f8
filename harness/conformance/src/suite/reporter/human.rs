//! Lines for a person: a `FAIL` line per failing cell and a `FLAKY` line
//! per flaky one (some runs of `--repeat` passed, some did not; it fails
//! the run as a failing cell does), `KNOWN` and `STALE` lines for cells
//! the baseline lists, a `DRIFT` line per disagreement with the files,
//! then one line of counts per column. Passing cells print nothing. Which
//! cells print a line is the exit code's rule ([`Cell::outcome`]): the
//! run fails exactly when a `FAIL`, `FLAKY`, `STALE` or `DRIFT` line is
//! printed.
//!
//! [`Cell::outcome`]: sharedos_grading::grade::judge::cell::Cell::outcome

use crate::suite::event::{CellEvent, RunEvent};
use sharedos_conformance_metadata::repeats::Outcome;
use sharedos_grading::input::baseline::BaselineVerdict;
use std::path::Path;

/// The lines of a run, in order; `baseline_file` is named in a stale entry.
#[must_use]
pub fn human_lines(events: &[RunEvent<'_>], baseline_file: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for event in events {
        match event {
            RunEvent::Started { .. } => {}
            RunEvent::Cell(event) => lines.extend(cell_line(event, baseline_file)),
            RunEvent::Drift(entry) => lines.push(format!("DRIFT {entry}")),
            RunEvent::Finished(totals) => {
                for (column, counts) in &totals.summary {
                    let parts: Vec<String> = counts.iter().map(|(status, n)| format!("{status}: {n}")).collect();
                    lines.push(format!("{column}  {}", parts.join("  ")));
                    if let Some(repeated) = totals.repeated.get(column) {
                        lines.push(format!("{column}  {}", repeated.summary()));
                    }
                }
            }
        }
    }
    lines
}

/// The line a cell prints, if any.
fn cell_line(event: &CellEvent<'_>, baseline_file: &Path) -> Option<String> {
    let name = event.key.trial_name();
    let cell = event.cell;
    match event.baseline {
        BaselineVerdict::Unlisted => match (cell.outcome(), &cell.repeats) {
            (Outcome::Pass, _) => None,
            (Outcome::Flaky, Some(r)) => {
                let statuses: Vec<&str> = r.statuses.iter().map(|s| s.as_str()).collect();
                Some(format!("FLAKY {name}: {} of {} runs passed ({})", r.passes, r.runs, statuses.join(", ")))
            }
            (_, repeats) => {
                let runs = repeats.as_ref().map(|r| format!(" (0 of {} runs passed)", r.runs)).unwrap_or_default();
                Some(format!("FAIL {name}: {}{runs}", cell.detail.as_deref().unwrap_or_default()))
            }
        },
        BaselineVerdict::KnownFailure { reason } => Some(format!("KNOWN {name}: {reason}")),
        BaselineVerdict::Stale { reason } => Some(format!(
            "STALE {name}: listed as a known failure ({reason}) but it is now {}; remove it from {}",
            cell.status,
            baseline_file.display()
        )),
    }
}
