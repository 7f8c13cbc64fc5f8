//! What each subcommand does. Library crates hold the logic; this file only
//! wires arguments to it, prints, and chooses the exit code.

use crate::args::{Command, Format, RunArgs, SelectArgs};
use crate::baseline::read_baseline;
use crate::exit::Exit;
use crate::interrupt::Interrupt;
use crate::stream::GoldenState;
use serde_json::json;
use sharedos_conformance::input::baseline::{Baseline, BaselineVerdict};
use sharedos_conformance::input::case::Family;
use sharedos_conformance::input::error::LoadError;
use sharedos_conformance::input::file::{read_regular, Links};
use sharedos_conformance::input::loader::{load_seat, load_suite, Suite};
use sharedos_conformance::output::atomic::write_if_changed;
use sharedos_conformance::output::golden::{bless, compare, strays, GoldenComparison, Stray};
use sharedos_conformance::run::column::columns;
use sharedos_conformance::suite::matrix::{plan, PlannedCell, RunSettings, Selection};
use sharedos_conformance::suite::report::{run_and_report, Report};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Runs one subcommand and returns how it ended.
pub fn dispatch(command: Command, interrupt: &Interrupt) -> Exit {
    match command {
        Command::List(select) => list(&select),
        Command::Run(args) => run(&args, Mode::Run, interrupt),
        Command::Check(args) => run(&args, Mode::Check, interrupt),
        Command::Bless(args) => run(&args, Mode::Bless, interrupt),
        Command::Certify(args) => crate::evidence::certify(&args, interrupt),
        Command::Verify(args) => crate::evidence::verify(&args),
        Command::Diff(args) => crate::evidence::diff(&args),
        Command::Decode(args) => crate::decode::decode(&args),
        Command::McpRelay(args) => crate::mcp_seats::relay(&args),
        Command::ProtocolCheck(args) => crate::protocol_check::protocol_check(&args),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Check,
    Bless,
}

fn selection(select: &SelectArgs) -> Selection {
    Selection { cases: select.cases.clone(), columns: select.columns.clone(), families: select.families.clone() }
}

fn load(select: &SelectArgs) -> Result<(Suite, Vec<PlannedCell>), Exit> {
    let invalid = |error: LoadError| {
        tell!("error: {error}");
        Exit::InvalidInput
    };
    let mut suite = load_suite(&select.root).map_err(invalid)?;
    for file in &select.seats {
        suite.add_seat(load_seat(file).map_err(invalid)?).map_err(invalid)?;
    }
    let skipped = crate::mcp_seats::prepare(&mut suite);
    let unknown_column = select
        .columns
        .iter()
        .find(|c| !skipped.contains(c) && !columns(&suite.seats).iter().any(|k| k.id == c.as_str()));
    if let Some(column) = unknown_column {
        tell!("error: no column `{column}`");
        return Err(Exit::Usage);
    }
    // A name the suite does not know is a usage error, as an unknown
    // column is; filters that know every name and select nothing are not.
    if let Some(family) = select.families.iter().find(|f| !Family::ALL.iter().any(|k| k.as_str() == f.as_str())) {
        let known: Vec<&str> = Family::ALL.iter().map(|f| f.as_str()).collect();
        tell!("error: no family `{family}` (one of {})", known.join(", "));
        return Err(Exit::Usage);
    }
    if let Some(case) = select.cases.iter().find(|c| suite.case(c).is_none()) {
        tell!("error: no case `{case}` in {}", select.root.join("cases").display());
        return Err(Exit::Usage);
    }
    let planned = plan(&suite, &selection(select));
    if planned.is_empty() {
        tell!("error: the filters select no cell");
        return Err(Exit::NothingSelected);
    }
    Ok((suite, planned))
}

fn list(select: &SelectArgs) -> Exit {
    let (_, planned) = match load(select) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    for cell in &planned {
        match select.format {
            Format::Human => say!("{}", cell.key.trial_name()),
            Format::Json | Format::Jsonl => say!(
                "{}",
                json!({ "case": cell.key.case, "condition": cell.key.condition, "column": cell.key.column, "declared": cell.declared.is_some() })
            ),
        }
    }
    Exit::Success
}

fn run(args: &RunArgs, mode: Mode, interrupt: &Interrupt) -> Exit {
    let (suite, planned) = match load(&args.select) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    let baseline = match read_baseline(args.baseline.as_deref(), &suite) {
        Ok(baseline) => baseline,
        Err(exit) => return exit,
    };
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    // Blessing rewrites the files, so only the other modes compare as they run.
    let golden_dir = args.select.root.join("golden");
    let compare_with = (mode != Mode::Bless).then_some(golden_dir.as_path());
    let selection = selection(&args.select);
    let settings = RunSettings { jobs, golden: compare_with, keep_grading: false };
    let report = match run_and_report(&suite, &selection, &planned, settings) {
        Ok(report) => report,
        Err(error) => {
            tell!("error: the harness failed to {error} (this is a bug)");
            return Exit::HarnessBug;
        }
    };
    if let Err(exit) = crate::seat_start::seats_started(&suite, &report.cells) {
        return exit;
    }
    // From here on only files are written: a signal waits for them.
    let _writing = interrupt.writing();
    // An extra seat is not the committed matrix: its reports are not written.
    let full = selection == Selection::default() && args.select.seats.is_empty();
    let golden = golden_states(&args.select.root, &suite, &report, mode);
    let mut drift: Vec<String> = golden.values().filter_map(|state| state.drift().map(str::to_string)).collect();
    // Files that could not be written: an I/O failure, not drift.
    let mut unwritten: Vec<String> =
        golden.values().filter_map(|state| state.unwritten().map(str::to_string)).collect();
    if full {
        let (stale, failed) = report_drift(&args.select.root, &report, mode);
        drift.extend(stale);
        unwritten.extend(failed);
        let (stray, failed) = stray_drift(&golden_dir, &suite, &report, mode);
        drift.extend(stray);
        unwritten.extend(failed);
    }
    if let Some(file) = &args.verdicts {
        let outcome = crate::verdicts::compare_or_write(file, &report, mode != Mode::Check);
        for moved in &outcome.written {
            tell!("verdicts written to {}: {moved}", file.display());
        }
        drift.extend(outcome.drift);
        unwritten.extend(outcome.unwritten);
    }
    if let Some(path) = &args.junit {
        match junit(&report, &baseline) {
            Ok(xml) => {
                if let Err(error) = write_if_changed(path, xml.as_bytes()) {
                    unwritten.push(format!("failed to {error}"));
                }
            }
            Err(error) => {
                tell!("error: the harness failed to write the JUnit report: {error} (this is a bug)");
                return Exit::HarnessBug;
            }
        }
    }
    print_results(&report, &golden, &drift, &baseline, args.select.format);
    if !unwritten.is_empty() {
        for failure in &unwritten {
            tell!("error: {failure}");
        }
        return Exit::Io;
    }
    // Committed verdicts hold the failures they accept: only drift fails.
    let failing = args.verdicts.is_none()
        && report
            .manifest
            .rows
            .iter()
            .any(|row| row.cells.iter().any(|cell| baseline.fails_run(&row.key_of(cell), cell.status)));
    if failing || !drift.is_empty() {
        Exit::ConformanceFailure
    } else {
        Exit::Success
    }
}

/// Compares (or, when blessing, rewrites) every run cell's golden file;
/// a real-clock column's cells have none.
fn golden_states(root: &Path, suite: &Suite, report: &Report, mode: Mode) -> BTreeMap<String, GoldenState> {
    let golden = root.join("golden");
    let real_clock: BTreeSet<&str> =
        suite.seats.iter().filter(|s| s.on_real_clock()).map(|s| s.column_id.as_str()).collect();
    let mut states = BTreeMap::new();
    for run in &report.cells {
        let state = if real_clock.contains(run.key.column.as_str()) {
            GoldenState::RealClock
        } else if mode == Mode::Bless {
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
fn stray_drift(golden_dir: &Path, suite: &Suite, report: &Report, mode: Mode) -> (Vec<String>, Vec<String>) {
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
            Stray::Leftover(_) => mode != Mode::Check,
            Stray::Orphan(_) => mode == Mode::Bless,
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
fn report_drift(root: &Path, report: &Report, mode: Mode) -> (Vec<String>, Vec<String>) {
    let files = [("reports/conformance.json", &report.manifest_json), ("reports/conformance.md", &report.markdown)];
    let (mut drift, mut unwritten) = (Vec::new(), Vec::new());
    for (relative, text) in files {
        let path = root.join(relative);
        if mode == Mode::Check {
            if read_regular(&path, Links::Follow).ok().as_deref() != Some(text.as_bytes()) {
                drift.push(format!("{relative} is stale; run `sharedos-conformance run` to regenerate it"));
            }
        } else if let Err(error) = write_if_changed(&path, text.as_bytes()) {
            unwritten.push(format!("failed to {error}"));
        }
    }
    (drift, unwritten)
}

fn print_results(
    report: &Report,
    golden: &BTreeMap<String, GoldenState>,
    drift: &[String],
    baseline: &Baseline,
    format: Format,
) {
    match format {
        Format::Human => print_human(report, drift, baseline),
        Format::Json => say!("{}", json!({ "manifest": report.manifest, "drift": drift })),
        Format::Jsonl => {
            for event in crate::stream::events(report, golden, drift, baseline, &summary(report)) {
                say!("{event}");
            }
        }
    }
}

/// Summary counts per column and status.
pub fn summary(report: &Report) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut counts: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for row in &report.manifest.rows {
        for cell in &row.cells {
            *counts.entry(cell.column_id.clone()).or_default().entry(cell.status.as_str().to_string()).or_default() +=
                1;
        }
    }
    counts
}

fn print_human(report: &Report, drift: &[String], baseline: &Baseline) {
    for row in &report.manifest.rows {
        for cell in &row.cells {
            let key = row.key_of(cell);
            let detail = cell.detail.clone().unwrap_or_default();
            match baseline.verdict(&key, cell.status) {
                BaselineVerdict::Unlisted if cell.status.breaks_build() => {
                    say!("FAIL {}: {detail}", key.trial_name());
                }
                BaselineVerdict::Unlisted => {}
                BaselineVerdict::KnownFailure { reason } => say!("KNOWN {}: {reason}", key.trial_name()),
                BaselineVerdict::Stale { reason } => say!(
                    "STALE {}: listed as a known failure ({reason}) but it is now {}; remove it from {}",
                    key.trial_name(),
                    cell.status,
                    baseline.file.display()
                ),
            }
        }
    }
    for entry in drift {
        say!("DRIFT {entry}");
    }
    for (column, counts) in summary(report) {
        let parts: Vec<String> = counts.iter().map(|(status, n)| format!("{status}: {n}")).collect();
        say!("{column}  {}", parts.join("  "));
    }
}

fn junit(report: &Report, baseline: &Baseline) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Report as Junit, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("sharedos-conformance");
    for row in &report.manifest.rows {
        for cell in &row.cells {
            let name = format!("{}/{}/{}", row.case_id, row.condition_id, cell.column_id);
            let verdict = baseline.verdict(&row.key_of(cell), cell.status);
            let status = if let BaselineVerdict::KnownFailure { reason } = verdict {
                let mut status = TestCaseStatus::skipped();
                status.set_message(format!("known failure: {reason}"));
                status
            } else if let BaselineVerdict::Stale { reason } = verdict {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(format!("stale known failure ({reason}): the cell is now {}", cell.status));
                status
            } else if cell.status.breaks_build() {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(cell.detail.clone().unwrap_or_default());
                status
            } else if cell.status.as_str() == "pass" {
                TestCaseStatus::success()
            } else {
                let mut status = TestCaseStatus::skipped();
                status.set_message(cell.status.as_str());
                status
            };
            suite.add_test_case(TestCase::new(name, status));
        }
    }
    let mut junit = Junit::new("sharedos-conformance");
    junit.add_test_suite(suite);
    junit.to_string()
}
