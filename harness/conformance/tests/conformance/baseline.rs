//! Baseline files: what a known failure, a stale entry and an unlisted
//! cell come to, and every way a baseline file is refused.

use crate::support::{committed_suite, scratch_suite};
use sharedos_grading::input::baseline::{load_baseline, BaselineVerdict};
use sharedos_grading::input::error::LoadErrorKind;
use sharedos_grading::vocab::{CellKey, CellStatus};

const ENTRY: &str =
    "[[known-failure]]\ncase = \"bounded-grant\"\ncondition = \"single-use-write-grant\"\ncolumn = \"model-scripted\"\nreason = \"not yet\"\n";

fn write(name: &str, text: &str) -> std::path::PathBuf {
    let path = scratch_suite("baseline", name).join("baseline.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn key(column: &str) -> CellKey {
    CellKey { case: "bounded-grant".into(), condition: "single-use-write-grant".into(), column: column.into() }
}

#[test]
fn a_listed_failure_is_known_a_listed_pass_is_stale_and_the_rest_stands() {
    let baseline = load_baseline(&write("verdicts", &format!("version = 1\n\n{ENTRY}")), &committed_suite()).unwrap();
    assert_eq!(baseline.len(), 1);
    let listed = key("model-scripted");
    assert_eq!(baseline.verdict(&listed, CellStatus::Fail), BaselineVerdict::KnownFailure { reason: "not yet" });
    assert!(!baseline.fails_run(&listed, CellStatus::NotExercised));
    assert_eq!(baseline.verdict(&listed, CellStatus::Pass), BaselineVerdict::Stale { reason: "not yet" });
    assert!(baseline.fails_run(&listed, CellStatus::NotApplicable));
    let other = key("adversary-embedded");
    assert_eq!(baseline.verdict(&other, CellStatus::Fail), BaselineVerdict::Unlisted);
    assert!(baseline.fails_run(&other, CellStatus::Fail));
    assert!(!baseline.fails_run(&other, CellStatus::Pass));
}

#[test]
fn every_bad_baseline_is_refused_at_its_place() {
    let suite = committed_suite();
    let cases = [
        ("syntax", "version = \n".to_string(), LoadErrorKind::InvalidToml, ""),
        ("unknown-key", "version = 1\nextra = 2\n".to_string(), LoadErrorKind::InvalidToml, ""),
        ("version", format!("version = 2\n{ENTRY}"), LoadErrorKind::OutOfBounds, "/version"),
        (
            "case",
            format!("version = 1\n{}", ENTRY.replace("bounded-grant", "nope")),
            LoadErrorKind::UnknownCell,
            "/known-failure/0/case",
        ),
        (
            "condition",
            format!("version = 1\n{}", ENTRY.replace("single-use-write-grant", "nope")),
            LoadErrorKind::UnknownCell,
            "/known-failure/0/condition",
        ),
        (
            "column",
            format!("version = 1\n{}", ENTRY.replace("model-scripted", "nope")),
            LoadErrorKind::UnknownCell,
            "/known-failure/0/column",
        ),
        (
            "reason",
            format!("version = 1\n{}", ENTRY.replace("not yet", " ")),
            LoadErrorKind::OutOfBounds,
            "/known-failure/0/reason",
        ),
        ("twice", format!("version = 1\n{ENTRY}{ENTRY}"), LoadErrorKind::DuplicateEntry, "/known-failure/1"),
    ];
    assert_eq!(cases.len(), 8);
    for (name, text, kind, pointer) in cases {
        let error = load_baseline(&write(name, &text), &suite).unwrap_err();
        assert_eq!((error.kind, error.pointer.as_str()), (kind, pointer), "{name}: {error}");
    }
    let error = load_baseline(&write("line", "version = 1\n\n[[known-failure]]\ncase = \n"), &suite).unwrap_err();
    assert!(error.expected.contains("(line 4)"), "{error}");
}
