//! The JUnit file of `--junit FILE`, in the form Maven Surefire writes
//! and its 3.0 schema (`tests/junit/surefire-test-report-3.0.xsd`) admits:
//! one `<testsuite>` whose counts are `tests`, `failures`, `errors` and
//! `skipped`, one `<testcase>` per cell, named `case/condition/column`,
//! its `classname` the column (so a CI groups cells by column) and its
//! `time` 0, since cells run on a simulated clock and the file must be
//! the same bytes for any `--jobs`.
//!
//! A cell passes, fails or is skipped as the exit code reads it
//! ([`Cell::outcome`], the one rule): a pass succeeds; a failing cell
//! fails with its detail, `type` its verdict; a known failure is skipped
//! with its reason; a stale baseline entry fails (`type`
//! `stale_known_failure`); any other verdict (declared, not applicable) is
//! skipped under its status. A repeated cell (`--repeat`) is written in
//! Surefire's meaning: one none of whose runs passed fails with its first
//! run's finding and a `rerunFailure` for each later run ("failed every
//! run"); a flaky one fails (`type` `flaky`, how many runs passed in its
//! message) with a `flakyFailure` for each run that did not pass, as
//! nextest writes a flaky test it fails. Every rerun element carries a
//! `type` (the run's verdict) and a `stackTrace` (the run's number and
//! finding), as the schema requires.
//!
//! [`Cell::outcome`]: sharedos_grading::grade::judge::cell::Cell::outcome

use crate::suite::event::{CellEvent, RunEvent};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use sharedos_conformance_metadata::repeats::{Outcome, Repeats};
use sharedos_grading::input::baseline::BaselineVerdict;
use sharedos_grading::vocab::CellStatus;
use std::io;

/// The name of the report's one test suite.
pub const NAME: &str = "sharedos-conformance";

/// What a failure is, as its `type` attribute says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FailureType {
    /// A failing verdict (`fail`, `not_exercised`).
    Verdict(CellStatus),
    /// A baseline entry for a cell that no longer fails.
    StaleKnownFailure,
    /// A repeated cell some runs of which passed and some did not.
    Flaky,
}

impl FailureType {
    fn as_str(self) -> &'static str {
        match self {
            FailureType::Verdict(status) => status.as_str(),
            FailureType::StaleKnownFailure => "stale_known_failure",
            FailureType::Flaky => "flaky",
        }
    }
}

/// The two Surefire elements a repeated cell's other runs are written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunElement {
    /// A run of a cell that failed every run.
    Rerun,
    /// A run that did not pass, of a cell some run of which passed.
    Flaky,
}

impl RunElement {
    fn tag(self) -> &'static str {
        match self {
            RunElement::Rerun => "rerunFailure",
            RunElement::Flaky => "flakyFailure",
        }
    }
}

/// One run of a repeated cell, as a child of its failure.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RunFailure {
    element: RunElement,
    status: CellStatus,
    message: String,
    stack_trace: String,
}

/// What a test case holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Body {
    Pass,
    Skipped(String),
    Failure { kind: FailureType, message: String, runs: Vec<RunFailure> },
}

/// The JUnit XML of a run.
///
/// # Errors
/// When the XML cannot be written (a bug: it is written to memory).
pub fn junit_xml(events: &[RunEvent<'_>]) -> io::Result<String> {
    let cases: Vec<(&CellEvent<'_>, Body)> = events
        .iter()
        .filter_map(|event| if let RunEvent::Cell(cell) = event { Some((cell, body_of(cell))) } else { None })
        .collect();
    let count = |f: fn(&Body) -> bool| cases.iter().filter(|(_, body)| f(body)).count().to_string();
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 4);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let suite = BytesStart::new("testsuite").with_attributes([
        ("name", NAME),
        ("tests", cases.len().to_string().as_str()),
        ("failures", count(|b| matches!(b, Body::Failure { .. })).as_str()),
        ("errors", "0"),
        ("skipped", count(|b| matches!(b, Body::Skipped(_))).as_str()),
    ]);
    writer.write_event(Event::Start(suite))?;
    for (event, body) in &cases {
        write_case(&mut writer, event, body)?;
    }
    writer.write_event(Event::End(BytesEnd::new("testsuite")))?;
    writer.write_indent()?;
    String::from_utf8(writer.into_inner()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn write_case(writer: &mut Writer<Vec<u8>>, event: &CellEvent<'_>, body: &Body) -> io::Result<()> {
    let name = xml_text(&event.key.trial_name());
    let classname = xml_text(&event.cell.column_id);
    let case = BytesStart::new("testcase").with_attributes([
        ("name", name.as_str()),
        ("classname", classname.as_str()),
        ("time", "0"),
    ]);
    match body {
        Body::Pass => writer.write_event(Event::Empty(case)),
        Body::Skipped(message) => {
            writer.write_event(Event::Start(case))?;
            let message = xml_text(message);
            writer.write_event(Event::Empty(BytesStart::new("skipped").with_attributes([("message", &*message)])))?;
            writer.write_event(Event::End(BytesEnd::new("testcase")))
        }
        Body::Failure { kind, message, runs } => {
            writer.write_event(Event::Start(case))?;
            let message = xml_text(message);
            let failure = BytesStart::new("failure").with_attributes([("message", &*message), ("type", kind.as_str())]);
            writer.write_event(Event::Empty(failure))?;
            for run in runs {
                write_run(writer, run)?;
            }
            writer.write_event(Event::End(BytesEnd::new("testcase")))
        }
    }
}

fn write_run(writer: &mut Writer<Vec<u8>>, run: &RunFailure) -> io::Result<()> {
    let message = xml_text(&run.message);
    let tag = run.element.tag();
    writer.write_event(Event::Start(
        BytesStart::new(tag).with_attributes([("message", &*message), ("type", run.status.as_str())]),
    ))?;
    writer.write_event(Event::Start(BytesStart::new("stackTrace")))?;
    writer.write_event(Event::Text(BytesText::new(&xml_text(&run.stack_trace))))?;
    writer.write_event(Event::End(BytesEnd::new("stackTrace")))?;
    writer.write_event(Event::End(BytesEnd::new(tag)))
}

/// `text` with every character XML 1.0 cannot carry (control characters
/// other than tab, line feed and carriage return; U+FFFE, U+FFFF) written
/// as its Rust escape: a finding may quote what a runtime sent.
fn xml_text(text: &str) -> String {
    let allowed = |c: char| matches!(u32::from(c), 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..);
    if text.chars().all(allowed) {
        return text.to_string();
    }
    text.chars().map(|c| if allowed(c) { c.to_string() } else { c.escape_unicode().to_string() }).collect()
}

/// What the cell's test case holds: what the baseline makes of the cell,
/// given what its runs come to under the one rule.
fn body_of(event: &CellEvent<'_>) -> Body {
    let cell = event.cell;
    let sample = |r: &Repeats| format!("{} of {} runs passed", r.passes, r.runs);
    let in_brackets = cell.repeats.as_ref().map(|r| format!(" ({})", sample(r))).unwrap_or_default();
    match event.baseline {
        BaselineVerdict::KnownFailure { reason } => Body::Skipped(format!("known failure: {reason}{in_brackets}")),
        BaselineVerdict::Stale { reason } => Body::Failure {
            kind: FailureType::StaleKnownFailure,
            message: format!("stale known failure ({reason}): the cell is now {}{in_brackets}", cell.status),
            runs: Vec::new(),
        },
        BaselineVerdict::Unlisted => match (cell.outcome(), &cell.repeats) {
            (Outcome::Pass, _) if cell.status == CellStatus::Pass => Body::Pass,
            (Outcome::Pass, _) => Body::Skipped(cell.status.as_str().to_string()),
            (Outcome::Flaky, Some(repeats)) => {
                let statuses: Vec<&str> = repeats.statuses.iter().map(|s| s.as_str()).collect();
                Body::Failure {
                    kind: FailureType::Flaky,
                    message: format!("flaky: {} ({})", sample(repeats), statuses.join(", ")),
                    runs: other_runs(event, RunElement::Flaky),
                }
            }
            (Outcome::Fail | Outcome::Flaky, _) => Body::Failure {
                kind: FailureType::Verdict(cell.status),
                message: cell.detail.clone().unwrap_or_else(|| cell.status.to_string()),
                runs: other_runs(event, RunElement::Rerun),
            },
        },
    }
}

/// A repeated cell's runs that did not pass, as `element`: for a cell that
/// failed every run, each run after the first (the first is its
/// `failure`); for a flaky cell, each one.
fn other_runs(event: &CellEvent<'_>, element: RunElement) -> Vec<RunFailure> {
    let Some(repeats) = &event.cell.repeats else { return Vec::new() };
    let skip = usize::from(element == RunElement::Rerun);
    let failed = repeats.statuses.iter().enumerate().skip(skip).filter(|(_, s)| s.breaks_build());
    failed
        .map(|(index, status)| {
            let run = format!("run {} of {}: {status}", index + 1, repeats.runs);
            let detail = event.runs.get(index).and_then(|cell| cell.detail.as_deref());
            let stack_trace = detail.map_or_else(|| run.clone(), |detail| format!("{run}\n{detail}"));
            RunFailure { element, status: *status, message: run, stack_trace }
        })
        .collect()
}
