//! What each subcommand does. Library crates hold the logic; this file only
//! wires arguments to it, prints, and chooses the exit code.

use crate::args::{Command, Format, RunArgs, SelectArgs};
use crate::baseline::read_baseline;
use crate::exit::Exit;
use crate::interrupt::Interrupt;
use crate::outputs::{Input, Kind, Output};
use crate::progress::{Plan, Shown};
use serde_json::json;
use sharedos_conformance::suite::event::{run_events, RunEvent};
use sharedos_conformance::suite::lifecycle::{settle, RunMode, REPORT_FILES};
use sharedos_conformance::suite::matrix::{workers, RunSettings};
use sharedos_conformance::suite::report::run_and_report;
use sharedos_conformance::suite::reporter::human::human_lines;
use sharedos_conformance::suite::reporter::jsonl::jsonl_values;
use sharedos_conformance::suite::reporter::junit::junit_xml;
use sharedos_evidence::verdicts::Verdicts;
use sharedos_grading::column::columns;
use sharedos_grading::input::case::Family;
use sharedos_grading::input::error::LoadError;
use sharedos_grading::input::loader::{load_seat, load_suite, Suite};
use sharedos_grading::output::atomic::write_if_changed;
use sharedos_grading::plan::{plan, PlannedCell, Selection};
use sharedos_grading::vocab::progress::Progress;
use std::path::PathBuf;

/// Runs one subcommand and returns how it ended.
pub fn dispatch(command: Command, interrupt: &Interrupt) -> Exit {
    match command {
        Command::List(select) => list(&select),
        Command::Run(args) => run(&args, RunMode::Run, interrupt),
        Command::Check(args) => run(&args, RunMode::Check, interrupt),
        Command::Bless(args) => run(&args, RunMode::Bless, interrupt),
        Command::Certify(args) => crate::evidence::certify(&args, interrupt),
        Command::Merge(args) => crate::evidence::merge(&args, interrupt),
        Command::Verify(args) => crate::evidence::verify(&args),
        Command::Diff(args) => crate::evidence::diff(&args),
        Command::Report(args) => crate::report::report(&args, interrupt),
        Command::Decode(args) => crate::decode::decode(&args),
        Command::McpRelay(args) => crate::mcp_seats::relay(&args),
        Command::ProtocolCheck(args) => crate::protocol_check::protocol_check(&args),
    }
}

fn selection(select: &SelectArgs) -> Selection {
    Selection {
        cases: select.cases.clone(),
        columns: select.columns.clone(),
        families: select.families.clone(),
        shard: None,
    }
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

fn run(args: &RunArgs, mode: RunMode, interrupt: &Interrupt) -> Exit {
    let (suite, planned) = match load(&args.select) {
        Ok(loaded) => loaded,
        Err(exit) => return exit,
    };
    if let Err(exit) = check_run_outputs(args, mode) {
        return exit;
    }
    let baseline = match read_baseline(args.baseline.as_deref(), &suite) {
        Ok(baseline) => baseline,
        Err(exit) => return exit,
    };
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    // Blessing rewrites the files, so only the other modes compare as they run.
    let golden_dir = args.select.root.join("golden");
    let compare_with = (mode != RunMode::Bless).then_some(golden_dir.as_path());
    let selection = selection(&args.select);
    let plan = Plan::of(&suite, &planned, args.repeat);
    if args.select.format == Format::Human {
        tell!("{}", about_to_run(&plan, workers(&suite, &planned, jobs)));
    }
    let shown = crate::progress::wanted(args.no_progress).then(|| Shown::new(&plan));
    let progress = shown.as_ref().map(|shown| shown as &dyn Progress);
    let settings = RunSettings { jobs, golden: compare_with, keep_grading: false, repeat: args.repeat, progress };
    let report = run_and_report(&suite, &selection, &planned, settings);
    if let Some(shown) = &shown {
        shown.clear();
    }
    let report = match report {
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
    // Nor is a repeated run: its manifest carries every run's verdicts.
    let full = selection == Selection::default() && args.select.seats.is_empty() && args.repeat == 1;
    let mut settled = settle(&args.select.root, &suite, &report, mode, full);
    if let Some(file) = &args.verdicts {
        let (manifest_json, markdown) = match report.verdicts_files() {
            Ok(files) => files,
            Err(error) => {
                tell!("error: the harness failed to write the verdicts: {error} (this is a bug)");
                return Exit::HarnessBug;
            }
        };
        let outcome = sharedos_evidence::verdicts::compare_or_write(
            file,
            Verdicts { manifest_json: &manifest_json, markdown: &markdown },
            mode != RunMode::Check,
        );
        if !outcome.unreadable.is_empty() {
            outcome.unreadable.iter().for_each(|error| tell!("error: {error}"));
            return Exit::InvalidInput;
        }
        for moved in &outcome.written {
            tell!("verdicts written to {}: {moved}", file.display());
        }
        settled.extend(outcome.drift, outcome.unwritten);
    }
    let events = run_events(&report, &settled.golden, &settled.drift, &baseline);
    if let Some(path) = &args.junit {
        match junit_xml(&events) {
            Ok(xml) => {
                if let Err(error) = write_if_changed(path, xml.as_bytes()) {
                    settled.unwritten.push(format!("failed to {error}"));
                }
            }
            Err(error) => {
                tell!("error: the harness failed to write the JUnit report: {error} (this is a bug)");
                return Exit::HarnessBug;
            }
        }
    }
    match args.select.format {
        Format::Human => human_lines(&events, &baseline.file).iter().for_each(|line| say!("{line}")),
        Format::Json => say!("{}", json!({ "manifest": report.manifest, "drift": settled.drift })),
        Format::Jsonl => jsonl_values(&events).iter().for_each(|value| say!("{value}")),
    }
    if !settled.unwritten.is_empty() {
        for failure in &settled.unwritten {
            tell!("error: {failure}");
        }
        return Exit::Io;
    }
    if mode == RunMode::Run && full && args.select.format == Format::Human {
        let reports = REPORT_FILES.map(|file| args.select.root.join(file).display().to_string());
        tell!(
            "the reports are {}; to see them as one page: sharedos-conformance report --html matrix.html",
            reports.join(" and ")
        );
    }
    // Committed verdicts hold the failures they accept: only drift fails.
    let failing = events.iter().any(|e| matches!(e, RunEvent::Finished(totals) if totals.failing > 0));
    if (args.verdicts.is_none() && failing) || !settled.drift.is_empty() {
        Exit::ConformanceFailure
    } else {
        Exit::Success
    }
}

/// The files `run`, `check` and `bless` are told to write, held to
/// [`crate::outputs`]'s rule before anything runs; `check` reads
/// `--verdicts` rather than writing it.
fn check_run_outputs(args: &RunArgs, mode: RunMode) -> Result<(), Exit> {
    let root = &args.select.root;
    let read: Vec<(&'static str, PathBuf)> = [
        ("the cases folder", root.join("cases")),
        ("the adversaries folder", root.join("adversaries")),
        ("the golden folder", root.join("golden")),
    ]
    .into_iter()
    .chain(REPORT_FILES.iter().map(|file| ("the matrix report", root.join(file))))
    .chain(args.select.seats.iter().map(|seat| ("--seat", seat.clone())))
    .chain(args.baseline.iter().map(|baseline| ("--baseline", baseline.clone())))
    .collect();
    let markdown = args.verdicts.as_deref().map(sharedos_evidence::verdicts::markdown_path);
    let mut inputs: Vec<Input<'_>> = read.iter().map(|(what, path)| Input { what, path }).collect();
    let mut outputs: Vec<Output<'_>> = Vec::new();
    if let Some(junit) = &args.junit {
        outputs.push(Output { flag: "--junit", path: junit, kind: Kind::JUnit });
    }
    if let (Some(verdicts), Some(markdown)) = (&args.verdicts, &markdown) {
        if mode == RunMode::Check {
            inputs.push(Input { what: "--verdicts", path: verdicts });
            inputs.push(Input { what: "the Markdown beside --verdicts", path: markdown });
        } else {
            outputs.push(Output { flag: "--verdicts", path: verdicts, kind: Kind::Manifest });
            outputs.push(Output { flag: "--verdicts (its Markdown)", path: markdown, kind: Kind::Markdown });
        }
    }
    crate::outputs::check(&outputs, &inputs).map_err(|refusal| {
        tell!("error: failed to {refusal}");
        Exit::Usage
    })?;
    // The verdicts `check` compares with are its input: one that is there
    // and is no manifest is said now, before the run, and is not drift.
    match &args.verdicts {
        Some(verdicts) if mode == RunMode::Check && verdicts.symlink_metadata().is_ok() => {
            sharedos_evidence::compare::read::read_manifest(verdicts).map(drop).map_err(|error| {
                tell!("error: failed to read the committed verdicts: {error}");
                Exit::InvalidInput
            })
        }
        _ => Ok(()),
    }
}

/// What a run is about to do, in one line for stderr.
fn about_to_run(plan: &Plan, workers: usize) -> String {
    let (cells, columns) = (plan.cells(), plan.columns.len());
    let runs = if plan.runs == cells { String::new() } else { format!(" ({} runs)", plan.runs) };
    let plural = |n: usize, one: &str, many: &str| if n == 1 { one.to_string() } else { format!("{n} {many}") };
    format!(
        "running {}{runs} of {} on {}",
        plural(usize::try_from(cells).unwrap_or(usize::MAX), "1 cell", "cells"),
        plural(columns, "1 column", "columns"),
        plural(workers, "1 worker", "workers")
    )
}
