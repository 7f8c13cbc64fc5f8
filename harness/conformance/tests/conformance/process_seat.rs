//! The committed process seats: the Python and the Node.js reference
//! runtimes, seated over `sharedos-runtime/2`, grade every row exactly as
//! the embedded adversary does (`harness/process/PROTOCOL.md`, "Checking a
//! runtime").

use crate::support::{committed_suite, suite_root};
use serde_json::Value;
use sharedos_conformance::suite::matrix::run_planned;
use sharedos_grading::input::loader::{parse_seat, Suite};
use sharedos_grading::plan::{plan, Selection};
use std::path::Path;

const SEAT: &str = "process:python-reference";
const ADVERSARY: &str = "adversary-embedded";
/// Each committed reference seat's column, and the runtime id it says `ready` with.
const REFERENCE_SEATS: [(&str, &str); 2] =
    [("process:node-reference", "sharedos-reference.node"), ("process:python-reference", "sharedos-reference.python")];

/// The committed suite with one more seat, `seat` (a seat file's text)
/// read as if it stood in `folder`.
fn suite_with_seat(folder: &Path, seat: &str) -> Suite {
    let mut suite = committed_suite();
    suite.add_seat(parse_seat(&folder.join("extra.json"), folder, seat).unwrap()).unwrap();
    suite
}

/// A manifest cell with the column named out.
fn graded(cell: &Value) -> Value {
    let mut cell = cell.clone();
    cell.as_object_mut().unwrap().remove("columnId");
    cell
}

#[test]
fn the_committed_suite_seats_both_reference_runtimes() {
    let suite = committed_suite();
    let columns: Vec<&str> = suite.seats.iter().map(|s| s.column_id.as_str()).collect();
    assert_eq!(columns, REFERENCE_SEATS.map(|(column, _)| column));
}

#[test]
fn every_row_of_each_reference_column_grades_as_the_adversary_column() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(suite_root().join("reports/conformance.json")).unwrap()).unwrap();
    let rows = manifest["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 131);
    for row in rows {
        let cells = row["cells"].as_array().unwrap();
        let cell = |column: &str| cells.iter().find(|c| c["columnId"] == column).unwrap_or_else(|| panic!("{column}"));
        let name = format!("{}/{}", row["caseId"], row["conditionId"]);
        for (seat, _) in REFERENCE_SEATS {
            assert_eq!(graded(cell(seat)), graded(cell(ADVERSARY)), "{name} {seat}");
        }
    }
}

#[test]
fn every_snapshot_of_each_reference_column_differs_from_the_adversary_only_in_column_and_runtime() {
    let golden = suite_root().join("golden");
    let mut compared = 0;
    for case in std::fs::read_dir(&golden).unwrap() {
        let case = case.unwrap().path();
        for file in std::fs::read_dir(&case).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_str().unwrap().to_string();
            let Some(condition) = name.strip_suffix(".adversary-embedded.json") else { continue };
            let adversary = std::fs::read_to_string(&file)
                .unwrap()
                .replace(ADVERSARY, "COLUMN")
                .replace("sharedos-conformance.adversary", "RUNTIME");
            for (column, runtime) in REFERENCE_SEATS {
                let seat = case.join(format!("{condition}.{}.json", column.replace(':', ".")));
                let seated = std::fs::read_to_string(&seat)
                    .unwrap_or_else(|e| panic!("{}: {e}", seat.display()))
                    .replace(column, "COLUMN")
                    .replace(runtime, "RUNTIME");
                assert_eq!(seated, adversary, "{}", seat.display());
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 2 * 118, "every run cell of the adversary column has its seated twins");
}

#[test]
fn a_seat_file_that_does_not_validate_names_its_file_pointer_and_expectation() {
    use sharedos_grading::input::error::LoadErrorKind;
    let file = Path::new("seats/bad.json");
    let parse = |text: &str| parse_seat(file, Path::new("/tmp"), text).unwrap_err();
    let good = r#"{"name": "ok", "label": "OK", "kind": "scripted", "command": "python3"}"#;
    assert!(parse_seat(file, Path::new("/tmp"), good).is_ok());
    let unknown = parse(r#"{"name": "ok", "label": "OK", "kind": "scripted", "command": "python3", "shell": true}"#);
    assert_eq!((unknown.kind, unknown.pointer.as_str()), (LoadErrorKind::UnknownKey, "/shell"), "{unknown}");
    let name = parse(r#"{"name": "Not An Id", "label": "OK", "kind": "scripted", "command": "python3"}"#);
    assert_eq!((name.kind, name.pointer.as_str()), (LoadErrorKind::OutOfBounds, "/name"), "{name}");
    let kind = parse(r#"{"name": "ok", "label": "OK", "kind": "scripted-ish", "command": "python3"}"#);
    assert_eq!((kind.kind, kind.pointer.as_str()), (LoadErrorKind::UnknownValue, "/kind"), "{kind}");
    let limits =
        parse(r#"{"name": "ok", "label": "OK", "kind": "scripted", "command": "x", "limits": {"busyTimeoutMs": 0}}"#);
    assert_eq!(limits.pointer, "/limits", "{limits}");
    assert_eq!(unknown.file, file);
}

#[test]
fn the_committed_seat_file_follows_its_schema_keys() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(suite_root().join("harness/seats/seat.schema.json")).unwrap())
            .unwrap();
    let seat: Value = serde_json::from_str(
        &std::fs::read_to_string(suite_root().join("harness/seats/python-reference.json")).unwrap(),
    )
    .unwrap();
    let known = schema["properties"].as_object().unwrap();
    let keys: Vec<&String> = seat.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 11);
    for key in keys {
        assert!(known.contains_key(key), "{key}");
    }
}

#[test]
fn a_real_clock_seat_runs_on_the_wall_clock_and_its_records_say_so() {
    let folder = suite_root().join("harness/seats");
    let seat = r#"{"name": "live", "label": "Live", "kind": "scripted", "command": "python3",
        "args": ["runtime.py"], "cwd": "reference", "passEnv": ["PATH"], "clock": "real"}"#;
    let suite = suite_with_seat(&folder, seat);
    // Rows with no timed step and no deadline to sit out take real
    // milliseconds, not the virtual seconds a stall would cost in real time.
    let selection = Selection {
        columns: vec!["process:live".to_string()],
        cases: vec!["hidden-tool".to_string(), "forged-grant".to_string()],
        ..Selection::default()
    };
    let cells = plan(&suite, &selection);
    assert!(!cells.is_empty());
    for cell in &cells {
        let run = run_planned(&suite, cell).unwrap();
        let name = cell.key.trial_name();
        assert_eq!(run.cell.status.as_str(), "pass", "{name}: {:?}", run.cell.detail);
        let snapshot: Value = serde_json::from_slice(run.snapshot.as_bytes()).unwrap();
        let turns = snapshot["turns"].as_array().unwrap();
        assert!(!turns.is_empty());
        for turn in turns {
            assert_eq!(turn["clock"], "real", "{name}");
        }
    }
}

#[test]
fn a_per_turn_seat_grades_every_drain_and_annotate_row_as_the_per_run_seat() {
    let folder = suite_root().join("harness/seats");
    let seat = r#"{"name": "fresh", "label": "Fresh", "kind": "scripted", "command": "python3",
        "args": ["runtime.py"], "cwd": "reference", "passEnv": ["PATH"], "process": "per-turn"}"#;
    let suite = suite_with_seat(&folder, seat);
    let selection = Selection {
        columns: vec!["process:fresh".to_string()],
        families: vec!["drain".to_string(), "annotate".to_string()],
        ..Selection::default()
    };
    let cells = plan(&suite, &selection);
    assert_eq!(cells.len(), 35);
    // The rows on the standard loop's own statements are declared not
    // applicable to any process seat, and have no golden file for one.
    let run_cells: Vec<_> = cells.iter().filter(|c| c.declared.is_none()).collect();
    assert_eq!(run_cells.len(), 28);
    for cell in run_cells {
        let run = run_planned(&suite, cell).unwrap();
        let golden =
            suite_root().join(format!("golden/{}/{}.process.python-reference.json", cell.key.case, cell.key.condition));
        let per_run = std::fs::read_to_string(&golden).unwrap().replace(SEAT, "COLUMN");
        let per_turn = String::from_utf8(run.snapshot.as_bytes().to_vec()).unwrap().replace("process:fresh", "COLUMN");
        assert_eq!(per_turn, per_run, "{}", cell.key.trial_name());
    }
}

/// Rules version 7: a line after the outcome or after the report fails the
/// row whose turn wrote it, quoting the line and the stderr tail; the next
/// row, run by the same process's successor, is unaffected.
#[test]
fn v7_a_breach_after_the_outcome_or_the_report_fails_its_own_row_and_not_the_next() {
    use sharedos_conformance::suite::matrix::{run_all, RunSettings};
    let standins = suite_root().join("harness/process/tests/standins");
    for when in ["after_outcome", "after_report"] {
        let seat = format!(
            r#"{{"name": "strays", "label": "Strays", "kind": "scripted", "command": "python3",
                "args": ["strays.py", "forged-grant", "{when}"], "cwd": "{}", "passEnv": ["PATH"]}}"#,
            standins.display()
        );
        let suite = suite_with_seat(&standins, &seat);
        let selection = Selection {
            columns: vec!["process:strays".to_string()],
            cases: vec!["forged-grant".to_string(), "hidden-tool".to_string()],
            ..Selection::default()
        };
        let planned = plan(&suite, &selection);
        let results = run_all(&suite, &planned, RunSettings { jobs: 1, ..RunSettings::default() });
        let mut seen = 0;
        for (cell, result) in results {
            let run = result.expect("a run cell").unwrap();
            let detail = run.cell.detail.clone().unwrap_or_default();
            if cell.key.case == "forged-grant" {
                assert_eq!(run.cell.status.as_str(), "fail", "{when}: {detail}");
                let phase = if when == "after_outcome" { "after its outcome" } else { "after its report" };
                let expected = format!("turn 1: the runtime broke sharedos-runtime/2 {phase} (`runtime_not_json`)");
                assert!(detail.starts_with(&expected), "{when}: {detail}");
                assert!(detail.contains("received `not a protocol line`"), "{when}: {detail}");
                assert!(
                    detail.contains(&format!("its stderr ended with `strays: one line too many {when}`")),
                    "{detail}"
                );
            } else {
                assert_eq!(run.cell.status.as_str(), "pass", "{when} {}: {detail}", cell.key.trial_name());
            }
            seen += 1;
        }
        assert_eq!(seen, 2, "{when}: both rows ran");
    }
}

/// A receipt of the report that does not read is a breach of its turn,
/// quoted, rather than a receipt dropped unseen.
#[test]
fn v7_a_receipt_that_does_not_read_is_a_breach_of_its_turn() {
    let standins = suite_root().join("harness/process/tests/standins");
    let seat = format!(
        r#"{{"name": "strays", "label": "Strays", "kind": "scripted", "command": "python3",
            "args": ["strays.py", "forged-grant", "bad_receipt"], "cwd": "{}", "passEnv": ["PATH"]}}"#,
        standins.display()
    );
    let suite = suite_with_seat(&standins, &seat);
    let selection = Selection {
        columns: vec!["process:strays".to_string()],
        cases: vec!["forged-grant".to_string()],
        ..Selection::default()
    };
    let planned = plan(&suite, &selection);
    assert_eq!(planned.len(), 1);
    let run = run_planned(&suite, &planned[0]).unwrap();
    let detail = run.cell.detail.unwrap_or_default();
    assert_eq!(run.cell.status.as_str(), "fail", "{detail}");
    assert!(
        detail.starts_with("turn 1: the runtime broke sharedos-runtime/2 after its report (`runtime_bad_message`): receipt 0 of the report does not read"),
        "{detail}"
    );
    assert!(detail.contains(r#""confidence":"high""#), "{detail}");
}

/// The schemas say what the harness writes and the reference runtime
/// reads: every line of a whole column's run, traced by the Node.js
/// runtime, is valid under its direction's schema.
#[test]
fn every_line_of_a_whole_column_follows_the_protocol_schemas() {
    use sharedos_conformance::suite::matrix::{run_all, RunSettings};
    let folder = suite_root().join("harness/seats");
    let trace = std::env::temp_dir().join(format!("sharedos-protocol-trace-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&trace);
    let seat = serde_json::json!({
        "name": "traced", "label": "Traced", "kind": "scripted", "command": "node", "args": ["runtime.mjs"],
        "cwd": "reference-node", "passEnv": ["PATH"], "env": {"NODE_REFERENCE_TRACE": trace},
    });
    let suite = suite_with_seat(&folder, &seat.to_string());
    let planned = plan(&suite, &Selection { columns: vec!["process:traced".to_string()], ..Selection::default() });
    for (cell, result) in run_all(&suite, &planned, RunSettings { jobs: 2, ..RunSettings::default() }) {
        if let Some(result) = result {
            assert_eq!(result.unwrap().cell.status.as_str(), "pass", "{}", cell.key.trial_name());
        }
    }
    let schema = |name: &str| {
        let path = suite_root().join("harness/metadata/schemas").join(name);
        jsonschema::validator_for(&serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()).unwrap()
    };
    let (harness, runtime) = (schema("harness-message.schema.json"), schema("runtime-message.schema.json"));
    let mut kinds = std::collections::BTreeSet::new();
    let text = std::fs::read_to_string(&trace).unwrap();
    std::fs::remove_file(&trace).unwrap();
    for line in text.lines() {
        let traced: Value = serde_json::from_str(line).unwrap();
        let (direction, message) = traced.as_object().unwrap().iter().next().unwrap();
        let validator = if direction == "in" { &harness } else { &runtime };
        assert!(validator.is_valid(message), "{direction}: {message}: {:?}", validator.validate(message).err());
        kinds.insert(format!("{direction} {}", message["type"].as_str().unwrap()));
    }
    // Every message of either direction occurs in the run.
    let harness_writes =
        ["abort", "ack", "closed", "draining", "fence", "hello", "hostError", "time", "toolResult", "turn"];
    let runtime_writes = ["annotate", "emit", "fenced", "invokeTool", "outcome", "ready", "report", "thrown", "wait"];
    let expected: std::collections::BTreeSet<String> = harness_writes
        .iter()
        .map(|k| format!("in {k}"))
        .chain(runtime_writes.iter().map(|k| format!("out {k}")))
        .collect();
    assert_eq!(kinds, expected);
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn a_prompted_seat_makes_the_calls_its_prompt_lists_and_is_graded_from_the_record() {
        let standins = suite_root().join("harness/process/tests/standins");
        let seat = format!(
            r#"{{"name": "prompted", "label": "Prompted", "kind": "prompted", "command": "python3",
                "args": ["prompted.py"], "cwd": "{}", "passEnv": ["PATH"]}}"#,
            standins.display()
        );
        let suite = suite_with_seat(&standins, &seat);
        let selection = Selection { columns: vec!["process:prompted".to_string()], ..Selection::default() };
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(suite_root().join("reports/conformance.json")).unwrap())
                .unwrap();
        let (mut passed, mut declared, mut graded_not_applicable) = (0, 0, 0);
        for cell in &plan(&suite, &selection) {
            let name = cell.key.trial_name();
            if cell.declared.is_some() {
                declared += 1;
                continue;
            }
            let run = run_planned(&suite, cell).unwrap();
            let row = manifest["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["caseId"] == cell.key.case && r["conditionId"] == cell.key.condition);
            let standard = row.unwrap()["cells"].as_array().unwrap().iter().find(|c| c["columnId"] == "model-scripted");
            let status = run.cell.status.as_str();
            assert!(matches!(status, "pass" | "not_applicable"), "{name}: {status} {:?}", run.cell.detail);
            if status == "not_applicable" {
                graded_not_applicable += 1;
                continue;
            }
            passed += 1;
            if standard.unwrap()["status"] != "pass" {
                continue;
            }
            assert_eq!(
                u64::from(run.cell.attempted),
                standard.unwrap()["attempted"].as_u64().unwrap(),
                "{name}: attempts as the Standard column's"
            );
        }
        // No row a seat told what (never when) to call fails; the rows it cannot
        // express are declared not applicable or not implemented before running,
        // or graded not applicable when the record lacks what the rule inspects.
        assert_eq!((passed, graded_not_applicable, declared), (74, 1, 56));
    }
}
