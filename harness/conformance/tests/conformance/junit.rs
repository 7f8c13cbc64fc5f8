//! The JUnit file as Surefire's 3.0 schema and its readers take it, and a
//! repeated cell (`--repeat`) under the one rule: a sample passes only when
//! every run did, whatever the order of its runs, and the JUnit file, the
//! human lines, the JSON Lines and the exit code's count all say so.
//! (`scripts/junit-xsd-check.sh` validates whole runs' files against the
//! schema itself with xmllint.)

use crate::support::committed_suite;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use sharedos_conformance::suite::event::{run_events, RunEvent};
use sharedos_conformance::suite::matrix::RunSettings;
use sharedos_conformance::suite::report::{run_and_report, Report};
use sharedos_conformance::suite::reporter::human::human_lines;
use sharedos_conformance::suite::reporter::jsonl::jsonl_values;
use sharedos_conformance::suite::reporter::junit::junit_xml;
use sharedos_conformance_metadata::repeats::Repeats;
use sharedos_grading::input::baseline::Baseline;
use sharedos_grading::plan::{plan, Selection};
use sharedos_grading::vocab::CellStatus::{self, Fail, NotExercised, Pass};
use std::collections::BTreeMap;
use std::path::Path;

const CASE: &str = "bounded-grant";

/// One element as read back: its name, attributes and children.
#[derive(Debug, Clone, Default)]
struct Element {
    name: String,
    attributes: BTreeMap<String, String>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    fn names(&self) -> Vec<&str> {
        self.children.iter().map(|c| c.name.as_str()).collect()
    }
}

fn element_of(start: &BytesStart<'_>) -> Element {
    let attributes = start
        .attributes()
        .map(|a| {
            let a = a.unwrap();
            (String::from_utf8(a.key.as_ref().to_vec()).unwrap(), a.unescape_value().unwrap().into_owned())
        })
        .collect();
    Element { name: String::from_utf8(start.name().as_ref().to_vec()).unwrap(), attributes, ..Element::default() }
}

/// The file's root element, read with quick-xml (the writer's own crate).
fn parse(xml: &str) -> Element {
    let mut reader = Reader::from_str(xml);
    let mut open: Vec<Element> = vec![Element::default()];
    loop {
        match reader.read_event().unwrap() {
            Event::Start(start) => open.push(element_of(&start)),
            Event::Empty(start) => open.last_mut().unwrap().children.push(element_of(&start)),
            Event::Text(text) => open.last_mut().unwrap().text.push_str(&text.decode().unwrap()),
            Event::GeneralRef(reference) => {
                let entity = reference.decode().unwrap();
                let named = quick_xml::escape::resolve_predefined_entity(&entity).map(str::to_string);
                let resolved = named.or_else(|| reference.resolve_char_ref().unwrap().map(String::from));
                open.last_mut().unwrap().text.push_str(&resolved.unwrap());
            }
            Event::End(_) => {
                let done = open.pop().unwrap();
                open.last_mut().unwrap().children.push(done);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut document = open.pop().unwrap();
    assert_eq!(document.children.len(), 1, "one root element");
    document.children.remove(0)
}

/// The bounded-grant rows run once; the first passing cells then given
/// the runs `samples` lists (each cell's status its first run's).
fn report_with(samples: &[&[CellStatus]]) -> Report {
    let suite = committed_suite();
    let selection = Selection { cases: vec![CASE.into()], ..Selection::default() };
    let planned = plan(&suite, &selection);
    let mut report = run_and_report(&suite, &selection, &planned, RunSettings { jobs: 1, ..RunSettings::default() })
        .expect("the selection runs");
    let passing = report.manifest.rows.iter_mut().flat_map(|row| row.cells.iter_mut()).filter(|c| c.status == Pass);
    let mut given = 0;
    for (cell, statuses) in passing.zip(samples) {
        cell.status = statuses[0];
        if statuses[0].breaks_build() {
            cell.detail = Some("the first run's finding".into());
        }
        cell.repeats = Some(Repeats::of(statuses.to_vec()));
        given += 1;
    }
    assert_eq!(given, samples.len(), "enough passing cells");
    report
}

/// What every reporter says of the cell named `name`: its test case, its
/// human line if any, its JSON Lines outcome, and the run's failing count.
struct Said {
    case: Element,
    human: Vec<String>,
    outcome: String,
    failing: usize,
}

fn said_of(report: &Report, name: &str) -> Said {
    let (golden, baseline) = (BTreeMap::new(), Baseline::default());
    let events = run_events(report, &golden, &[], &baseline);
    let root = parse(&junit_xml(&events).unwrap());
    // Read as a CI reads it, under one `testsuite` root or several suites.
    let suites = if root.name == "testsuites" { root.children.iter().collect() } else { vec![&root] };
    let mut cases = suites.into_iter().flat_map(|suite| &suite.children);
    let case = cases.find(|c| c.attribute("name") == Some(name)).unwrap().clone();
    let human = human_lines(&events, Path::new("baseline.toml"));
    let human = human.into_iter().filter(|l| l.contains(&format!(" {name}: "))).collect();
    let lines = jsonl_values(&events);
    let cell = lines
        .iter()
        .find(|l| {
            l["event"] == "cell"
                && format!(
                    "{}/{}/{}",
                    l["case"].as_str().unwrap(),
                    l["condition"].as_str().unwrap(),
                    l["column"].as_str().unwrap()
                ) == name
        })
        .unwrap();
    let Some(RunEvent::Finished(totals)) = events.last() else { panic!("the stream ends with its totals") };
    Said { case, human, outcome: cell["outcome"].as_str().unwrap().to_string(), failing: totals.failing }
}

/// The name of the `index`-th cell `report_with` gave runs.
fn repeated_name(report: &Report, index: usize) -> String {
    let repeated = report.manifest.rows.iter().flat_map(|row| row.cells.iter().map(move |c| (row, c)));
    let (row, cell) = repeated.filter(|(_, c)| c.repeats.is_some()).nth(index).unwrap();
    row.key_of(cell).trial_name()
}

#[test]
fn a_sample_that_failed_then_passed_fails_with_each_failing_run_as_a_flaky_failure() {
    let report = report_with(&[&[Fail, Fail, Pass]]);
    let name = repeated_name(&report, 0);
    let said = said_of(&report, &name);
    // Not `failure` + `rerunFailure`, which Surefire and nextest read as
    // "failed every run": the passing run is in the failure's message.
    assert_eq!(said.case.names(), ["failure", "flakyFailure", "flakyFailure"], "{:?}", said.case);
    let failure = &said.case.children[0];
    assert_eq!(failure.attribute("type"), Some("flaky"));
    assert_eq!(failure.attribute("message"), Some("flaky: 1 of 3 runs passed (fail, fail, pass)"));
    for (run, flaky) in said.case.children[1..].iter().enumerate() {
        assert_eq!(flaky.attribute("type"), Some("fail"));
        assert_eq!(flaky.attribute("message"), Some(format!("run {} of 3: fail", run + 1).as_str()));
        assert_eq!(flaky.names(), ["stackTrace"]);
    }
    assert_eq!(said.human, [format!("FLAKY {name}: 1 of 3 runs passed (fail, fail, pass)")]);
    assert_eq!((said.outcome.as_str(), said.failing), ("flaky", 1));
}

#[test]
fn a_sample_that_passed_then_failed_fails_the_run_too() {
    let report = report_with(&[&[Pass, Fail]]);
    let name = repeated_name(&report, 0);
    let said = said_of(&report, &name);
    assert_eq!(said.case.names(), ["failure", "flakyFailure"], "{:?}", said.case);
    assert_eq!(said.case.children[0].attribute("type"), Some("flaky"));
    assert_eq!(said.case.children[1].attribute("message"), Some("run 2 of 2: fail"));
    assert_eq!(said.case.children[1].children[0].text, "run 2 of 2: fail");
    assert_eq!(said.human, [format!("FLAKY {name}: 1 of 2 runs passed (pass, fail)")]);
    assert_eq!((said.outcome.as_str(), said.failing), ("flaky", 1), "its first run passed, and it fails all the same");
}

#[test]
fn a_sample_none_of_whose_runs_passed_fails_with_a_rerun_failure_for_each_later_run() {
    let report = report_with(&[&[Fail, NotExercised, Fail], &[Pass, Pass, Pass]]);
    let name = repeated_name(&report, 0);
    let said = said_of(&report, &name);
    assert_eq!(said.case.names(), ["failure", "rerunFailure", "rerunFailure"], "{:?}", said.case);
    assert_eq!(said.case.children[0].attribute("type"), Some("fail"));
    assert_eq!(said.case.children[0].attribute("message"), Some("the first run's finding"));
    let types: Vec<Option<&str>> = said.case.children[1..].iter().map(|r| r.attribute("type")).collect();
    assert_eq!(types, [Some("not_exercised"), Some("fail")]);
    assert_eq!(said.case.children[2].children[0].text, "run 3 of 3: fail");
    assert_eq!(said.human, [format!("FAIL {name}: the first run's finding (0 of 3 runs passed)")]);
    assert_eq!((said.outcome.as_str(), said.failing), ("fail", 1));
    // Every run passed: a plain success, nothing printed.
    let passed = said_of(&report, &repeated_name(&report, 1));
    assert!(passed.case.children.is_empty() && passed.human.is_empty(), "{:?}", passed.case);
    assert_eq!(passed.outcome, "pass");
}

/// Surefire's order of a test case's children (its schema's sequence).
const ORDER: [&str; 9] = [
    "failure",
    "rerunFailure",
    "flakyFailure",
    "skipped",
    "error",
    "rerunError",
    "flakyError",
    "system-out",
    "system-err",
];

#[test]
fn every_element_carries_what_surefires_schema_requires() {
    let report = report_with(&[&[Fail, Fail, Pass], &[Pass, Fail], &[Fail, NotExercised, Fail]]);
    let (golden, baseline) = (BTreeMap::new(), Baseline::default());
    let events = run_events(&report, &golden, &[], &baseline);
    let xml = junit_xml(&events).unwrap();
    let suite = parse(&xml);
    assert_eq!(suite.name, "testsuite", "Surefire's schema has one root, a test suite");
    for required in ["name", "tests", "errors", "skipped", "failures"] {
        assert!(suite.attribute(required).is_some(), "{required}: {:?}", suite.attributes);
    }
    assert_eq!(suite.attribute("disabled"), None, "the skipped count is `skipped`");
    let count = |name: &str| suite.children.iter().filter(|c| c.names().contains(&name)).count().to_string();
    assert_eq!(suite.attribute("tests"), Some(suite.children.len().to_string().as_str()));
    assert_eq!(suite.attribute("failures"), Some(count("failure").as_str()));
    assert_eq!(suite.attribute("skipped"), Some(count("skipped").as_str()));
    assert_eq!(count("failure"), "3");
    for case in &suite.children {
        let column = case.attribute("name").unwrap().rsplit('/').next().unwrap();
        assert_eq!(case.attribute("classname"), Some(column), "cells grouped by column");
        assert_eq!(case.attribute("time"), Some("0"), "no wall time in the file");
        let places: Vec<usize> = case.names().iter().map(|n| ORDER.iter().position(|o| o == n).unwrap()).collect();
        assert!(places.windows(2).all(|w| w[0] <= w[1]), "in the schema's order: {:?}", case.names());
        for child in case.children.iter().filter(|c| c.name != "skipped") {
            assert!(child.attribute("type").is_some_and(|t| !t.is_empty()), "{child:?}");
        }
        for rerun in case.children.iter().filter(|c| c.name.starts_with("rerun") || c.name.starts_with("flaky")) {
            assert_eq!(rerun.names(), ["stackTrace"], "{rerun:?}");
            assert!(rerun.children[0].text.starts_with("run "), "{rerun:?}");
        }
    }
}

#[test]
fn text_xml_cannot_carry_is_written_as_its_escape() {
    let mut report = report_with(&[]);
    let cell = report.manifest.rows[0].cells.iter_mut().find(|c| c.status == Pass).unwrap();
    cell.status = Fail;
    cell.detail = Some("a runtime said \u{1b}[31m\u{0}\u{FFFE} & <this>".into());
    let (golden, baseline) = (BTreeMap::new(), Baseline::default());
    let events = run_events(&report, &golden, &[], &baseline);
    let xml = junit_xml(&events).unwrap();
    let allowed = |c: char| matches!(u32::from(c), 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..);
    assert!(xml.chars().all(allowed), "only characters XML 1.0 allows");
    let suite = parse(&xml);
    let failure = suite.children.iter().flat_map(|c| &c.children).find(|c| c.name == "failure").unwrap();
    assert_eq!(failure.attribute("message"), Some("a runtime said \\u{1b}[31m\\u{0}\\u{fffe} & <this>"));
}
