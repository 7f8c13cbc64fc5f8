//! A run's one event stream and the reporters that render it: the stream
//! is `started`, one cell per selected cell in canonical order, one drift
//! per entry, then `finished`; every reporter says the same thing of it.

use crate::support::{committed_suite, scratch_suite};
use sharedos_conformance::suite::event::{run_events, RunEvent};
use sharedos_conformance::suite::lifecycle::GoldenState;
use sharedos_conformance::suite::matrix::RunSettings;
use sharedos_conformance::suite::report::run_and_report;
use sharedos_conformance::suite::reporter::human::human_lines;
use sharedos_conformance::suite::reporter::jsonl::jsonl_values;
use sharedos_conformance::suite::reporter::junit::junit_xml;
use sharedos_grading::input::baseline::{load_baseline, Baseline, BaselineVerdict};
use sharedos_grading::plan::{plan, Selection};
use std::collections::BTreeMap;

const CASE: &str = "bounded-grant";
const KNOWN: &str = "[[known-failure]]\ncase = \"bounded-grant\"\ncondition = \"single-use-write-grant\"\ncolumn = \"adversary-embedded\"\nreason = \"kept to see it stale\"\n";

#[test]
fn the_stream_orders_cells_then_drift_and_every_reporter_renders_it_alike() {
    let suite = committed_suite();
    let selection = Selection { cases: vec![CASE.into()], ..Selection::default() };
    let planned = plan(&suite, &selection);
    let report = run_and_report(&suite, &selection, &planned, RunSettings { jobs: 2, ..RunSettings::default() })
        .expect("the selection runs");
    let path = scratch_suite("events", "baseline").join("baseline.toml");
    std::fs::write(&path, format!("version = 1\n\n{KNOWN}")).unwrap();
    let baseline: Baseline = load_baseline(&path, &suite).unwrap();
    let golden: BTreeMap<String, GoldenState> =
        report.cells.iter().map(|run| (run.key.trial_name(), GoldenState::Same)).collect();
    let drift = vec!["reports/conformance.md is stale".to_string(), "a second entry".to_string()];
    let events = run_events(&report, &golden, &drift, &baseline);

    let cells = planned.len();
    assert!(cells >= 9, "{cells} cells selected");
    assert_eq!(events.len(), cells + drift.len() + 2);
    assert!(matches!(events[0], RunEvent::Started { selected } if selected == cells));
    let names: Vec<String> =
        events.iter().filter_map(|e| if let RunEvent::Cell(c) = e { Some(c.key.trial_name()) } else { None }).collect();
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| planned.iter().position(|p| p.key.trial_name() == *n));
    assert_eq!(names.len(), cells);
    assert_eq!(names, sorted, "cells in canonical order");
    assert_eq!(events[cells + 1], RunEvent::Drift("reports/conformance.md is stale"));
    let RunEvent::Finished(totals) = &events[cells + 3] else { panic!("the stream ends with its totals") };
    assert_eq!((totals.drift, totals.stale, totals.known_failures), (2, 1, 0));
    assert_eq!(totals.failing, 1, "the stale entry fails the run");
    assert_eq!(totals.summary.values().flat_map(|c| c.values()).sum::<usize>(), cells);
    let stale =
        events.iter().filter(|e| matches!(e, RunEvent::Cell(c) if matches!(c.baseline, BaselineVerdict::Stale { .. })));
    assert_eq!(stale.count(), 1);

    let lines = jsonl_values(&events);
    assert_eq!(lines.len(), events.len());
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "cell").count(), cells);
    assert_eq!((kinds[0], kinds[kinds.len() - 1]), ("started", "finished"));
    assert_eq!(lines.last().unwrap()["failing"], 1);

    let human = human_lines(&events, &path);
    let stale_lines: Vec<&String> = human.iter().filter(|l| l.starts_with("STALE ")).collect();
    assert_eq!(stale_lines.len(), 1, "{human:?}");
    assert!(stale_lines[0].contains(&path.display().to_string()));
    assert_eq!(human.iter().filter(|l| l.starts_with("DRIFT ")).count(), 2);
    assert_eq!(human.iter().filter(|l| l.starts_with("FAIL ")).count(), 0, "{human:?}");
    assert_eq!(human.len(), 1 + 2 + totals.summary.len());

    let xml = junit_xml(&events).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), cells);
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(xml.contains("stale known failure (kept to see it stale)"));
}
