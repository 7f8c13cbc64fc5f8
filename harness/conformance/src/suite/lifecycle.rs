//! The files a run is held to, and what each command does with them: every
//! run cell's golden snapshot, the committed reports of a full run, and the
//! stray files below the golden folder.
//!
//! `run` compares golden files and writes the reports; `check` only
//! compares, so a stale report is drift; `bless` rewrites golden files and
//! removes orphans. What could not be written is kept apart from drift: it
//! is an I/O failure, not a moved verdict.

use crate::suite::report::Report;
use sharedos_grading::input::file::{read_regular, Links};
use sharedos_grading::input::loader::Suite;
use sharedos_grading::output::atomic::write_if_changed;
use sharedos_grading::output::golden::{bless, compare, strays, GoldenComparison, Stray};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The committed reports of a full run, relative to the suite root.
pub const REPORT_FILES: [&str; 2] = ["reports/conformance.json", "reports/conformance.md"];

/// What a command does with the files a run is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// Compare golden files; write the reports.
    Run,
    /// Compare everything; write nothing.
    Check,
    /// Rewrite golden files and the reports; remove orphans.
    Bless,
}

/// How a run cell compares with its golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoldenState {
    /// Byte-identical.
    Same,
    /// Rewritten by `bless`.
    Blessed,
    /// No golden file exists (message says where).
    Missing(String),
    /// The golden file differs (message holds the diff).
    Differs(String),
    /// `bless` could not write it.
    Unwritable(String),
    /// Not compared, nor blessed: the column runs on a real clock, so its
    /// records carry wall time and no two runs are alike.
    RealClock,
}

impl GoldenState {
    /// The wire name of the state.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            GoldenState::Same => "same",
            GoldenState::Blessed => "blessed",
            GoldenState::Missing(_) => "missing",
            GoldenState::Differs(_) => "differs",
            GoldenState::Unwritable(_) => "unwritable",
            GoldenState::RealClock => "not_compared",
        }
    }

    /// The drift message, when the state is drift.
    #[must_use]
    pub fn drift(&self) -> Option<&str> {
        match self {
            GoldenState::Same | GoldenState::Blessed | GoldenState::Unwritable(_) | GoldenState::RealClock => None,
            GoldenState::Missing(text) | GoldenState::Differs(text) => Some(text),
        }
    }

    /// Why the file could not be written, when `bless` failed to.
    #[must_use]
    pub fn unwritten(&self) -> Option<&str> {
        match self {
            GoldenState::Unwritable(text) => Some(text),
            _ => None,
        }
    }
}

/// What holding a run to its files found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct Settled {
    /// Each run cell's golden state, by `case/condition/column`.
    pub golden: BTreeMap<String, GoldenState>,
    /// Each way the files disagree with the run, in words.
    pub drift: Vec<String>,
    /// Each file that could not be written or removed, in words.
    pub unwritten: Vec<String>,
}

impl Settled {
    /// Adds another source's drift and unwritten files.
    pub fn extend(&mut self, drift: Vec<String>, unwritten: Vec<String>) {
        self.drift.extend(drift);
        self.unwritten.extend(unwritten);
    }
}

/// Holds `report` to its files under `root` as `mode` says. `full` is a run
/// of the committed matrix (no filter, no extra seat): only it writes or
/// compares the reports and looks for strays.
pub fn settle(root: &Path, suite: &Suite, report: &Report, mode: RunMode, full: bool) -> Settled {
    let golden = golden_states(root, suite, report, mode);
    let drift = golden.values().filter_map(|state| state.drift().map(str::to_string)).collect();
    let unwritten = golden.values().filter_map(|state| state.unwritten().map(str::to_string)).collect();
    let mut settled = Settled { golden, drift, unwritten };
    if full {
        let (stale, failed) = report_drift(root, report, mode);
        settled.extend(stale, failed);
        let (stray, failed) = stray_drift(&root.join("golden"), suite, report, mode);
        settled.extend(stray, failed);
    }
    settled
}

/// Compares (or, when blessing, rewrites) every run cell's golden file;
/// a real-clock column's cells have none.
fn golden_states(root: &Path, suite: &Suite, report: &Report, mode: RunMode) -> BTreeMap<String, GoldenState> {
    let golden = root.join("golden");
    let real_clock: BTreeSet<&str> =
        suite.seats.iter().filter(|s| s.on_real_clock()).map(|s| s.column_id.as_str()).collect();
    let mut states = BTreeMap::new();
    for run in &report.cells {
        let state = if real_clock.contains(run.key.column.as_str()) {
            GoldenState::RealClock
        } else if mode == RunMode::Bless {
            match bless(&golden, &run.key, &run.snapshot) {
                Ok(_) => GoldenState::Blessed,
                Err(error) => GoldenState::Unwritable(format!("failed to {error}")),
            }
        } else {
            let comparison = run.golden.clone().unwrap_or_else(|| compare(&golden, &run.key, &run.snapshot));
            match comparison {
                GoldenComparison::Same => GoldenState::Same,
                GoldenComparison::Missing { path } => {
                    GoldenState::Missing(format!("{}: no golden file", path.display()))
                }
                GoldenComparison::Unreadable { path, detail } => {
                    GoldenState::Differs(format!("{}: cannot be read ({detail})", path.display()))
                }
                GoldenComparison::Differs { path, diff } => {
                    GoldenState::Differs(format!("{} differs:\n{diff}", path.display()))
                }
            }
        };
        states.insert(run.key.trial_name(), state);
    }
    states
}

/// Stray files below the golden folder of a full run: reported by
/// `check` (and orphans by `run`); temporary files left by an interrupted
/// write removed by `run` and `bless`, orphans by `bless`. Golden files of
/// a seat this run does not seat are another run's and left alone.
fn stray_drift(golden_dir: &Path, suite: &Suite, report: &Report, mode: RunMode) -> (Vec<String>, Vec<String>) {
    let expected: BTreeSet<PathBuf> = report.cells.iter().map(|run| run.key.relative_path()).collect();
    let seated: Vec<String> = suite.seats.iter().map(|s| s.column_id.replace(':', ".")).collect();
    let foreign =
        |name: &str| name.contains(".process.") && !seated.iter().any(|c| name.ends_with(&format!(".{c}.json")));
    let (mut drift, mut unwritten) = (Vec::new(), Vec::new());
    let found = match strays(golden_dir, &expected, foreign) {
        Ok(found) => found,
        Err(error) => return (drift, vec![format!("failed to list {}: {error}", golden_dir.display())]),
    };
    for stray in found {
        let path = stray.path().display().to_string();
        let remove = match stray {
            Stray::Leftover(_) => mode != RunMode::Check,
            Stray::Orphan(_) => mode == RunMode::Bless,
        };
        if remove {
            if let Err(error) = std::fs::remove_file(stray.path()) {
                unwritten.push(format!("failed to remove {path}: {error}"));
            }
            continue;
        }
        drift.push(match stray {
            Stray::Orphan(_) => format!("{path}: no cell of the suite writes this golden file; `bless` removes it"),
            Stray::Leftover(_) => {
                format!("{path}: a temporary file an interrupted write left; `run` or `bless` removes it")
            }
        });
    }
    (drift, unwritten)
}

/// Writes the committed reports (run, bless) or compares them (check):
/// the stale ones, and the ones that could not be written.
fn report_drift(root: &Path, report: &Report, mode: RunMode) -> (Vec<String>, Vec<String>) {
    let texts = [&report.manifest_json, &report.markdown];
    let (mut drift, mut unwritten) = (Vec::new(), Vec::new());
    for (relative, text) in REPORT_FILES.into_iter().zip(texts) {
        let path = root.join(relative);
        if mode == RunMode::Check {
            if read_regular(&path, Links::Follow).ok().as_deref() != Some(text.as_bytes()) {
                drift.push(format!("{relative} is stale; run `sharedos-conformance run` to regenerate it"));
            }
        } else if let Err(error) = write_if_changed(&path, text.as_bytes()) {
            unwritten.push(format!("failed to {error}"));
        }
    }
    (drift, unwritten)
}
