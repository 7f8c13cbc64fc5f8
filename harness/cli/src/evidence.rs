//! `certify`, `verify` and `diff`: arguments wired to `sharedos-evidence`.

use crate::args::{CertifyArgs, DiffArgs, DiffFormat, MergeArgs, VerifyArgs, VerifyFormat};
use crate::exit::Exit;
use crate::interrupt::Interrupt;
use crate::outputs::{check, Input, Kind, Output};
use crate::progress::{Plan, Shown};
use serde_json::json;
use sharedos_conformance::certify::{certified_selection, prepare, Certified, CertifyError, CertifyRequest};
use sharedos_conformance_metadata::repeats::Outcome;
use sharedos_evidence::bundle::WriteError;
use sharedos_evidence::dsse::{read_signing_key, read_verifying_key};
use sharedos_evidence::merge::{prepare as prepare_merge, MergeError, MergeRequest};
use sharedos_evidence::verify::{verify as run_verify, VerifyOptions};
use sharedos_grading::input::baseline::{Baseline, BaselineVerdict};
use sharedos_grading::input::loader::{load_seat, load_suite};
use sharedos_grading::plan::plan;
use sharedos_grading::vocab::progress::Progress;
use std::path::Path;

pub fn certify(args: &CertifyArgs, interrupt: &Interrupt) -> Exit {
    let invalid = |error: &dyn std::fmt::Display| {
        tell!("error: {error}");
        Exit::InvalidInput
    };
    let mut suite = match load_suite(&args.root) {
        Ok(suite) => suite,
        Err(error) => return invalid(&error),
    };
    let mut column = args.column.clone();
    if let Some(file) = &args.seat {
        let mut seat = match load_seat(file) {
            Ok(seat) => seat,
            Err(error) => return invalid(&error),
        };
        // The bundle reads the seat's file again, from `--root` when its
        // path is relative; this one was named from the current folder.
        if let Ok(absolute) = std::path::absolute(&seat.file) {
            seat.file = absolute;
        }
        column.get_or_insert_with(|| seat.column_id.clone());
        if let Err(error) = suite.add_seat(seat) {
            return invalid(&error);
        }
    }
    let Some(column) = column else {
        tell!("error: say which column to certify: --column ID or --seat FILE");
        return Exit::Usage;
    };
    let (cases, adversaries) = (args.root.join("cases"), args.root.join("adversaries"));
    let mut inputs = vec![
        Input { what: "the cases folder", path: &cases },
        Input { what: "the adversaries folder", path: &adversaries },
    ];
    inputs.extend(args.seat.iter().map(|path| Input { what: "--seat", path }));
    inputs.extend(args.baseline.iter().map(|path| Input { what: "--baseline", path }));
    if let Err(exit) = check_out(&args.out, &inputs) {
        return exit;
    }
    if crate::mcp_seats::prepare(&mut suite).contains(&column) {
        return Exit::NothingSelected;
    }
    if let Err(exit) = crate::seat_start::seats_start(&suite, |seat| seat == column) {
        return exit;
    }
    let baseline = match crate::baseline::read_baseline(args.baseline.as_deref(), &suite) {
        Ok(baseline) => baseline,
        Err(exit) => return exit,
    };
    let key = match args.sign_key.as_deref().map(read_signing_key).transpose() {
        Ok(key) => key,
        Err(error) => {
            tell!("error: failed to {error}");
            return Exit::InvalidInput;
        }
    };
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let shown = crate::progress::wanted(args.no_progress).then(|| {
        let planned = plan(&suite, &certified_selection(&column, args.shard));
        Shown::new(&Plan::of(&suite, &planned, args.repeat))
    });
    let request = CertifyRequest {
        suite: &suite,
        root: &args.root,
        column_id: &column,
        jobs,
        sign_key: key.as_ref(),
        out: &args.out,
        shard: args.shard,
        repeat: args.repeat,
        progress: shown.as_ref().map(|shown| shown as &dyn Progress),
    };
    let prepared = prepare(request);
    if let Some(shown) = &shown {
        shown.clear();
    }
    let written = prepared.and_then(|prepared| {
        // Only the writing waits for a signal's clean-up: the run is
        // stopped mid-way, a bundle is written whole or not at all.
        let _writing = interrupt.writing();
        prepared.write().map_err(Into::into)
    });
    match written {
        Ok(certified) => {
            let signed = if key.is_some() { ", signed" } else { "" };
            report_certified(&column, &certified, &args.out, signed, &baseline)
        }
        Err(error) => {
            tell!("error: failed to {error}");
            match error {
                CertifyError::UnknownColumn(_) | CertifyError::Write(WriteError::Exists(_)) => Exit::Usage,
                CertifyError::Suite(_) | CertifyError::Read { .. } => Exit::InvalidInput,
                CertifyError::Write(WriteError::Io { .. }) => Exit::Io,
                CertifyError::Run(_) | CertifyError::Canonical(_) => Exit::HarnessBug,
            }
        }
    }
}

/// Prints what `certify` wrote and each cell the baseline says something
/// of, and chooses the exit code from the baseline.
fn report_certified(column: &str, certified: &Certified, out: &Path, signed: &str, baseline: &Baseline) -> Exit {
    let counts: Vec<String> = certified.summary.iter().map(|(s, n)| format!("{s}: {n}")).collect();
    say!("{column}  {}", counts.join("  "));
    if let Some(repeated) = &certified.repeated {
        say!("{column}  {}", repeated.summary());
    }
    say!("wrote {} ({} files{signed})", out.display(), certified.files);
    for (key, status, outcome) in &certified.cells {
        match baseline.verdict(key, *outcome) {
            BaselineVerdict::KnownFailure { reason } => say!("KNOWN {}: {reason}", key.trial_name()),
            BaselineVerdict::Stale { reason } => {
                say!("STALE {}: listed as a known failure ({reason}) but it is now {status}", key.trial_name());
            }
            BaselineVerdict::Unlisted if *outcome == Outcome::Flaky => say!("FLAKY {}", key.trial_name()),
            BaselineVerdict::Unlisted if outcome.breaks_build() => say!("FAIL {}", key.trial_name()),
            BaselineVerdict::Unlisted => {}
        }
    }
    if certified.cells.iter().any(|(key, _, outcome)| baseline.fails_run(key, *outcome)) {
        Exit::ConformanceFailure
    } else {
        Exit::Success
    }
}

pub fn verify(args: &VerifyArgs) -> Exit {
    let key = match args.key.as_deref().map(read_verifying_key).transpose() {
        Ok(key) => key,
        Err(error) => {
            tell!("error: failed to {error}");
            return Exit::InvalidInput;
        }
    };
    let shown = crate::progress::wanted(args.no_progress).then(|| Shown::new(&Plan::default()));
    let progress = shown.as_ref().map(|shown| shown as &dyn Progress);
    let options = VerifyOptions { key: key.as_ref(), suite: args.suite.as_deref(), progress };
    let verified = run_verify(&args.bundle, options);
    if let Some(shown) = &shown {
        shown.clear();
    }
    let verification = match verified {
        Ok(verification) => verification,
        Err(error) => {
            tell!("error: failed to {error}");
            return Exit::InvalidInput;
        }
    };
    let signature = verification.signature.as_str();
    match args.format {
        VerifyFormat::Human => {
            for failure in &verification.failures {
                say!("FAIL {}", sharedos_grading::output::printable::one_line(&failure.to_string()));
            }
            let partial = verification
                .shard
                .map(|shard| format!("; shard {shard}, a partial bundle (`merge` joins it with the others)"))
                .unwrap_or_default();
            if verification.verified() {
                say!("verified: {} cells graded again; signature {signature}{partial}", verification.regraded);
            } else {
                say!("does not verify: {} failures; signature {signature}", verification.failures.len());
            }
        }
        VerifyFormat::Json => {
            let failures: Vec<_> = verification
                .failures
                .iter()
                .map(|f| {
                    let place = f.place();
                    json!({ "code": f.code(), "file": place.file, "line": place.line, "pointer": place.pointer, "message": f.to_string() })
                })
                .collect();
            say!(
                "{}",
                json!({ "verified": verification.verified(), "regraded": verification.regraded, "signature": signature, "shard": verification.shard.map(|s| s.to_string()), "failures": failures })
            );
        }
    }
    if verification.verified() {
        Exit::Success
    } else {
        Exit::ConformanceFailure
    }
}

pub fn diff(args: &DiffArgs) -> Exit {
    use sharedos_evidence::compare::{diff::diff, read::read_manifest, render};
    let read = |path: &std::path::Path| {
        read_manifest(path).map_err(|error| {
            tell!("error: {error}");
            Exit::InvalidInput
        })
    };
    let (before, after) = match (read(&args.before), read(&args.after)) {
        (Ok(before), Ok(after)) => (before, after),
        (Err(exit), _) | (_, Err(exit)) => return exit,
    };
    let compared = diff(&before, &after);
    // Only the changes are printed: the manifests are let go first.
    drop((before, after));
    if !args.across_runtimes {
        if let Some(exit) = refuse_across_runtimes(&compared) {
            return exit;
        }
    }
    match args.format {
        DiffFormat::Human => say!("{}", render::human(&compared).trim_end_matches('\n')),
        DiffFormat::Markdown => say!("{}", render::markdown(&compared).trim_end_matches('\n')),
        DiffFormat::Json => say!("{}", serde_json::to_string(&compared).unwrap_or_default()),
    }
    if compared.regressed() {
        Exit::ConformanceFailure
    } else {
        Exit::Success
    }
}

/// Refuses a diff in which both sides name a column's runtime and they
/// differ (ADR 0007: outcomes of two runtimes are not pooled unless asked
/// for, with `--across-runtimes`). A side that names none (a manifest
/// written before runtimes were recorded, or SharedOS's) is compared, and
/// the change is said among the rest.
fn refuse_across_runtimes(compared: &sharedos_evidence::compare::diff::Diff) -> Option<Exit> {
    use sharedos_evidence::compare::diff::Moved;
    let changed: Vec<(&String, &String, &String)> = compared
        .moved
        .iter()
        .filter_map(|moved| match moved {
            Moved::Runtime { column, before: Some(before), after: Some(after) } => Some((column, before, after)),
            _ => None,
        })
        .collect();
    if changed.is_empty() {
        return None;
    }
    for (column, before, after) in changed {
        tell!("error: column {column} seats another runtime in B (A: {before}; B: {after})");
    }
    tell!("its cells are two runtimes' outcomes: give --across-runtimes to compare them side by side");
    Some(Exit::InvalidInput)
}

/// A bundle's `--out`, held to [`crate::outputs`]'s rule before anything runs.
fn check_out(out: &Path, inputs: &[Input<'_>]) -> Result<(), Exit> {
    check(&[Output { flag: "--out", path: out, kind: Kind::Bundle }], inputs).map_err(|refusal| {
        tell!("error: failed to {refusal}");
        Exit::Usage
    })
}

pub fn merge(args: &MergeArgs, interrupt: &Interrupt) -> Exit {
    let inputs: Vec<Input<'_>> = args.parts.iter().map(|path| Input { what: "the part", path }).collect();
    if let Err(exit) = check_out(&args.out, &inputs) {
        return exit;
    }
    let key = match args.sign_key.as_deref().map(read_signing_key).transpose() {
        Ok(key) => key,
        Err(error) => {
            tell!("error: failed to {error}");
            return Exit::InvalidInput;
        }
    };
    let request = MergeRequest { parts: &args.parts, out: &args.out, sign_key: key.as_ref() };
    let written = prepare_merge(request).and_then(|prepared| {
        let _writing = interrupt.writing();
        prepared.write().map_err(Into::into)
    });
    match written {
        Ok(merged) => {
            let counts: Vec<String> = merged.summary.iter().map(|(s, n)| format!("{s}: {n}")).collect();
            say!("{}  {}", merged.column, counts.join("  "));
            say!(
                "merged {} shards into {} ({} files{})",
                merged.shards,
                args.out.display(),
                merged.files,
                if key.is_some() { ", signed" } else { "" }
            );
            Exit::Success
        }
        Err(error) => {
            tell!("error: failed to {error}");
            match error {
                MergeError::NoParts | MergeError::Write(WriteError::Exists(_)) => Exit::Usage,
                MergeError::Write(WriteError::Io { .. }) => Exit::Io,
                MergeError::Canonical(_) => Exit::HarnessBug,
                _ => Exit::InvalidInput,
            }
        }
    }
}
