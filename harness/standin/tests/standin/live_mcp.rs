//! Live MCP seats end to end: the stand-in reads each vendor's recipe as
//! that CLI would, connects over streamable HTTP (with the bearer token)
//! or over the stdio relay with rmcp's client, and makes the calls its
//! prompt lists; the cells are graded from the record on a real clock.

use serde_json::Value;
use sharedos_conformance::suite::matrix::{run_all, RunSettings};
use sharedos_grading::input::loader::{load_suite, parse_seat, Suite};
use sharedos_grading::plan::{plan, Selection};
use sharedos_mcp::serve::RelayCommand;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const STANDIN: &str = env!("CARGO_BIN_EXE_sharedos-mcp-standin");

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed suite with a live MCP seat of `vendor` over `transport`
/// whose CLI is the stand-in, as column `mcp:<vendor>-<transport>`.
fn suite_with(vendor: &str, transport: &str) -> (Suite, String) {
    suite_with_seat(Path::new("live.json"), &seat_file(vendor, transport))
}

/// The seat file of that seat.
fn seat_file(vendor: &str, transport: &str) -> String {
    format!(
        r#"{{"name": "{vendor}-{transport}", "label": "Stand-in", "kind": "mcp", "vendor": "{vendor}",
            "transport": "{transport}", "command": "{STANDIN}", "limits": {{"idleTimeoutMs": 5000}}}}"#
    )
}

/// The committed suite with the seat `text` read from `file`.
fn suite_with_seat(file: &Path, text: &str) -> (Suite, String) {
    let mut seat = parse_seat(file, Path::new("."), text).expect("the seat file validates");
    if let Some(mcp) = seat.mcp.as_mut() {
        mcp.relay = Some(RelayCommand { program: STANDIN.to_string(), args: vec!["relay".to_string()] });
    }
    let mut suite = load_suite(&repository()).expect("the committed suite loads");
    let column = seat.column_id.clone();
    suite.add_seat(seat).expect("a new column");
    (suite, column)
}

/// The committed MCP column's status of every cell, by `case/condition`.
fn committed_mcp_statuses() -> BTreeMap<String, String> {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(repository().join("reports/conformance.json")).unwrap()).unwrap();
    let mut statuses = BTreeMap::new();
    for row in manifest["rows"].as_array().unwrap() {
        let cell = row["cells"].as_array().unwrap().iter().find(|c| c["columnId"] == "mcp-scripted").unwrap();
        let key = format!("{}/{}", row["caseId"].as_str().unwrap(), row["conditionId"].as_str().unwrap());
        statuses.insert(key, cell["status"].as_str().unwrap().to_string());
    }
    statuses
}

/// What a live column declares not applicable, and the committed MCP
/// column (on virtual time) runs: rows that time the turn tighter than a
/// CLI's start-up on a real clock.
const REAL_CLOCK_REASON: &str = "a live CLI spends its start-up and model round trips in real time inside the turn";

/// Runs `selection` in the live column, each cell declared or run as a
/// run would, and checks each cell's status is the committed MCP
/// column's, but for rows a real clock cannot time (declared not
/// applicable here, with their reason); returns how many cells there were,
/// how many passed, and how many were declared for the real clock.
fn matches_the_mcp_column(suite: &Suite, column: &str, selection: Selection) -> (usize, usize, usize) {
    let committed = committed_mcp_statuses();
    let selection = Selection { columns: vec![column.to_string()], ..selection };
    let planned = plan(suite, &selection);
    let (mut cells, mut passed, mut real_clock) = (0, 0, 0);
    for (planned, result) in run_all(suite, &planned, RunSettings { jobs: 2, ..RunSettings::default() }) {
        let cell = match (planned.declared, result) {
            (Some(cell), _) => cell,
            (None, Some(run)) => run.expect("the cell runs").cell,
            (None, None) => unreachable!("an undeclared cell is run"),
        };
        let key = format!("{}/{}", planned.key.case, planned.key.condition);
        let status = cell.status.as_str();
        cells += 1;
        if status == "not_applicable" && cell.detail.as_deref().is_some_and(|d| d.ends_with(REAL_CLOCK_REASON)) {
            real_clock += 1;
            continue;
        }
        assert_eq!(Some(status), committed.get(&key).map(String::as_str), "{key} in {column}: {:?}", cell.detail);
        passed += usize::from(status == "pass");
    }
    (cells, passed, real_clock)
}

fn cases(ids: &[&str]) -> Selection {
    Selection { cases: ids.iter().map(|id| (*id).to_string()).collect(), ..Selection::default() }
}

#[test]
fn a_live_seat_over_the_stdio_relay_grades_as_the_committed_mcp_column() {
    for vendor in ["claude-code", "codex", "deepseek", "pi"] {
        let (suite, column) = suite_with(vendor, "stdio");
        // A message's createdAt is the instant of its call, which a real
        // clock puts after the turn's start (rules version 4).
        let selection = cases(&["escalation", "hidden-tool", "forged-grant", "messaging-reply-accepted"]);
        assert_eq!(matches_the_mcp_column(&suite, &column, selection), (4, 4, 0), "{vendor}");
    }
}

#[test]
fn a_live_seat_run_five_times_states_its_pass_rate_pass_all_and_pass_any() {
    let (suite, column) = suite_with("codex", "http");
    let selection = Selection { columns: vec![column.clone()], ..cases(&["escalation", "hidden-tool"]) };
    let planned = plan(&suite, &selection);
    let settings = RunSettings { jobs: 2, repeat: 5, ..RunSettings::default() };
    let results = sharedos_conformance::suite::matrix::run_all(&suite, &planned, settings);
    let report = sharedos_conformance::suite::report::build_report(&suite, &selection, results).unwrap();
    let cells: Vec<_> = report.manifest.rows.iter().flat_map(|row| &row.cells).collect();
    assert_eq!(cells.len(), 2);
    for cell in cells {
        let repeats = cell.repeats.as_ref().expect("a live cell run five times states its repeats");
        assert_eq!((repeats.runs, repeats.statuses.len()), (5, 5));
        assert_eq!(repeats.statuses[0], cell.status, "the cell shows its first run");
        // The stand-in makes the same calls every time: every run passes.
        assert_eq!(repeats.passes, 5, "{:?}", repeats.statuses);
        assert!(repeats.pass_all && repeats.pass_any);
        assert_eq!(repeats.interval, [0.5655, 1.0]);
    }
    // Every run's records are in the evidence, each run's marked.
    let runs: Vec<Option<u32>> = report
        .cells
        .iter()
        .flat_map(|run| {
            std::iter::once(run.evidence.repeat).chain(run.reruns.iter().map(|again| again.evidence.repeat))
        })
        .collect();
    assert_eq!(runs, [None, Some(2), Some(3), Some(4), Some(5)].repeat(2));
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn d41_d42_d45_a_live_seat_of_each_vendor_over_http_grades_as_the_committed_mcp_column() {
        for vendor in ["claude-code", "codex", "deepseek", "pi"] {
            let (suite, column) = suite_with(vendor, "http");
            let matrix = Selection { families: vec!["matrix".into()], ..Selection::default() };
            let graded = matches_the_mcp_column(&suite, &column, matrix);
            assert_eq!(
                graded,
                (34, 26, 1),
                "{vendor}: the matrix family's cells, those that pass, one timed by the clock"
            );
            let stalled = cases(&["retryable-w01-read-then-deadline"]);
            assert_eq!(
                matches_the_mcp_column(&suite, &column, stalled),
                (1, 1, 0),
                "{vendor}: a CLI stalled to the deadline"
            );
        }
    }

    #[test]
    #[ignore = "heavy"]
    fn a_live_seat_certifies_over_the_whole_suite_and_its_bundle_verifies() {
        use sharedos_conformance::certify::{certify, CertifyRequest};
        use sharedos_evidence::verify::{verify, VerifyOptions};
        let folder = tempfile::tempdir().unwrap();
        // A bundle carries the certified seat's file, so the seat is a file.
        let (file, text) = (folder.path().join("live.json"), seat_file("codex", "http"));
        std::fs::write(&file, &text).unwrap();
        let (suite, column) = suite_with_seat(&file, &text);
        let out = folder.path().join("bundle");
        let request = CertifyRequest {
            suite: &suite,
            root: &repository(),
            column_id: &column,
            jobs: 2,
            sign_key: None,
            out: &out,
            shard: None,
            repeat: 1,
            progress: None,
        };
        let certified = certify(request).expect("a live seat certifies");
        let mut committed = BTreeMap::new();
        for status in committed_mcp_statuses().into_values() {
            *committed.entry(status).or_insert(0) += 1;
        }
        // Five rows the committed column passes on virtual time time the turn
        // tighter than a real clock allows, and are declared not applicable.
        *committed.entry("pass".to_string()).or_insert(0) -= 5;
        *committed.entry("not_applicable".to_string()).or_insert(0) += 5;
        assert_eq!(certified.summary, committed, "the whole suite, as the committed MCP column grades it");
        let evidence = std::fs::read_to_string(out.join("evidence.jsonl")).unwrap();
        assert!(evidence.contains(r#""clock":"real""#), "its records say they ran on a real clock");
        let verification =
            verify(&out, VerifyOptions { suite: Some(&repository()), ..VerifyOptions::default() }).unwrap();
        assert!(verification.verified(), "{:?}", verification.failures);
        let run_cells = certified.cells.len() - committed.get("not_applicable").copied().unwrap_or(0);
        assert!(verification.regraded > run_cells, "the live column's run cells and the Adversary's, graded again");
    }
}
