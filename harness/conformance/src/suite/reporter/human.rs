//! Lines for a person: a `FAIL` line per failing cell, `KNOWN` and `STALE`
//! lines for cells the baseline lists, a `DRIFT` line per disagreement with
//! the files, then one line of counts per column. Passing cells print
//! nothing.

use crate::suite::event::RunEvent;
use sharedos_grading::input::baseline::BaselineVerdict;
use std::path::Path;

/// The lines of a run, in order; `baseline_file` is named in a stale entry.
#[must_use]
pub fn human_lines(events: &[RunEvent<'_>], baseline_file: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for event in events {
        match event {
            RunEvent::Started { .. } => {}
            RunEvent::Cell(event) => {
                let name = event.key.trial_name();
                if let Some(r) = event.cell.repeats.as_ref().filter(|r| r.is_flaky()) {
                    let statuses: Vec<&str> = r.statuses.iter().map(|s| s.as_str()).collect();
                    lines.push(format!(
                        "FLAKY {name}: {} of {} runs passed ({})",
                        r.passes,
                        r.runs,
                        statuses.join(", ")
                    ));
                }
                match event.baseline {
                    BaselineVerdict::Unlisted if event.cell.status.breaks_build() => {
                        lines.push(format!("FAIL {name}: {}", event.cell.detail.as_deref().unwrap_or_default()));
                    }
                    BaselineVerdict::Unlisted => {}
                    BaselineVerdict::KnownFailure { reason } => lines.push(format!("KNOWN {name}: {reason}")),
                    BaselineVerdict::Stale { reason } => lines.push(format!(
                        "STALE {name}: listed as a known failure ({reason}) but it is now {}; remove it from {}",
                        event.cell.status,
                        baseline_file.display()
                    )),
                }
            }
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
