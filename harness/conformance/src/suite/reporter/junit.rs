//! The JUnit file of `--junit FILE`: one test case per cell, named
//! `case/condition/column`. A pass succeeds; a failing cell fails with its
//! detail; a known failure is skipped with its reason; a stale baseline
//! entry fails; any other verdict (declared, not applicable) is skipped
//! under its status. A cell run more than once (`--repeat`) keeps its
//! first run's outcome, as the exit code does, and lists each later run
//! that did not pass: as a flaky run of a success (`flakyFailure`), or a
//! rerun of a failure (`rerunFailure`).

use crate::suite::event::{CellEvent, RunEvent};
use quick_junit::{NonSuccessKind, Report, SerializeError, TestCase, TestCaseStatus, TestRerun, TestSuite};
use sharedos_grading::input::baseline::BaselineVerdict;
use sharedos_grading::vocab::CellStatus;

/// The name of the report and of its one test suite.
pub const NAME: &str = "sharedos-conformance";

/// The JUnit XML of a run.
///
/// # Errors
/// When the XML cannot be written (a bug: every field is text).
pub fn junit_xml(events: &[RunEvent<'_>]) -> Result<String, SerializeError> {
    let mut suite = TestSuite::new(NAME);
    for event in events {
        if let RunEvent::Cell(cell) = event {
            suite.add_test_case(TestCase::new(cell.key.trial_name(), status_of(cell)));
        }
    }
    let mut report = Report::new(NAME);
    report.add_test_suite(suite);
    report.to_string()
}

fn status_of(event: &CellEvent<'_>) -> TestCaseStatus {
    let mut status = first_run_status(event);
    if let Some(repeats) = &event.cell.repeats {
        let later = repeats.statuses.iter().enumerate().skip(1).filter(|(_, s)| s.breaks_build());
        status.add_reruns(later.map(|(index, run)| {
            let mut rerun = TestRerun::new(NonSuccessKind::Failure);
            rerun.set_message(format!("run {} of {}: {run}", index + 1, repeats.runs));
            rerun
        }));
    }
    status
}

fn first_run_status(event: &CellEvent<'_>) -> TestCaseStatus {
    let cell = event.cell;
    let (mut status, message) = match event.baseline {
        BaselineVerdict::KnownFailure { reason } => (TestCaseStatus::skipped(), format!("known failure: {reason}")),
        BaselineVerdict::Stale { reason } => (
            TestCaseStatus::non_success(NonSuccessKind::Failure),
            format!("stale known failure ({reason}): the cell is now {}", cell.status),
        ),
        BaselineVerdict::Unlisted if cell.status.breaks_build() => {
            (TestCaseStatus::non_success(NonSuccessKind::Failure), cell.detail.clone().unwrap_or_default())
        }
        BaselineVerdict::Unlisted if cell.status == CellStatus::Pass => return TestCaseStatus::success(),
        BaselineVerdict::Unlisted => (TestCaseStatus::skipped(), cell.status.as_str().to_string()),
    };
    status.set_message(message);
    status
}
