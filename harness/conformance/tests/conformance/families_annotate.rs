//! The annotate rows, run against the reference envelope: where a stated
//! fact lands (result metadata, the record's lifted fields, the prompt set)
//! and where it does not.

use crate::support;

use support::{adversary_run, column_run, committed_suite};

use serde_json::{json, Value};
use sharedos_conformance::suite::cell::CellRun;
use sharedos_grading::column::column;
use sharedos_grading::input::loader::Suite;

fn suite() -> Suite {
    committed_suite()
}

fn run(suite: &Suite, case: &str) -> CellRun {
    let condition = suite.case(case).unwrap_or_else(|| panic!("no case {case}")).conditions[0].id.clone();
    let run = adversary_run(suite, case, &condition);
    assert_eq!(run.cell.status.as_str(), "pass", "{case}: {:?}", run.cell.detail);
    run
}

fn turn(run: &CellRun) -> Value {
    run.snapshot.value()["turns"][0].clone()
}

fn receipt(run: &CellRun, attempt: &str) -> Value {
    run.snapshot.value()["receipts"].as_array().unwrap().iter().find(|r| r["attemptId"] == attempt).unwrap().clone()
}

#[test]
fn e90_an_annotation_survives_every_ending() {
    let s = suite();
    let endings = [
        ("annotate-kept-on-completed", "succeeded"),
        ("annotate-kept-on-plugin-fail", "failed"),
        ("annotate-kept-on-escalated", "escalated"),
        ("annotate-kept-on-cancelled", "cancelled"),
        ("annotate-kept-on-runtime-threw", "failed"),
        ("annotate-kept-on-invalid-outcome", "failed"),
        ("annotate-kept-on-audit-outage", "failed"),
    ];
    for (case, status) in endings {
        let run = run(&s, case);
        assert_eq!(turn(&run)["status"], status, "{case}");
        assert_eq!(turn(&run)["annotations"]["note"], json!({"kept": true}), "{case}");
    }
}

#[test]
fn e86_reserved_keys_are_refused_and_nothing_is_stored() {
    let s = suite();
    let run = run(&s, "annotate-refused-keys");
    for attempt in ["empty-key", "runtime-key", "proto-key"] {
        assert_eq!(receipt(&run, attempt)["reasonCode"], "annotation_refused", "{attempt}");
    }
    assert_eq!(turn(&run)["annotations"], json!({}));
}

#[test]
fn e88_e89_the_last_write_wins_and_an_annotation_outranks_outcome_metadata() {
    let s = suite();
    assert_eq!(turn(&run(&s, "annotate-last-write-wins"))["annotations"], json!({"attempt": 2}));
    let run = run(&s, "annotate-outranks-outcome-metadata");
    assert_eq!(turn(&run)["annotations"], json!({"onlyOutcome": "kept", "shared": "from-annotate"}));
}

#[test]
fn e91_e92_e25_kept_while_draining_dropped_after_close() {
    let s = suite();
    let draining = run(&s, "annotate-kept-while-draining");
    assert_eq!(turn(&draining)["annotations"], json!({"whileDraining": true}));
    let closed = run(&s, "annotate-dropped-after-close");
    assert_eq!(receipt(&closed, "annotate-after-close")["observed"], "succeeded", "no error");
    assert_eq!(turn(&closed)["annotations"], json!({}), "and no effect");
    assert_eq!(receipt(&closed, "call-after-close")["reasonCode"], "host_closed");
    assert_eq!(receipt(&closed, "emit-after-close")["reasonCode"], "emit_refused");
}

#[test]
fn e93_e94_e95_the_prompt_hash_is_lifted_even_when_cancelled_and_absent_when_never_stated() {
    let s = suite();
    let lifted = run(&s, "annotate-prompt-hash-lifted");
    let hash = turn(&lifted)["promptHash"].clone();
    assert!(hash.as_str().is_some_and(|h| h.len() == 64));
    assert_eq!(evidence_prompt(&lifted), Some(hash.clone()));
    let cancelled = run(&s, "annotate-prompt-hash-kept-when-cancelled");
    assert_eq!(
        (turn(&cancelled)["status"].clone(), turn(&cancelled)["promptHash"].clone()),
        (json!("cancelled"), hash)
    );
    let never = run(&s, "annotate-cancelled-before-anything-stated");
    assert_eq!(turn(&never)["promptHash"], Value::Null);
    assert_eq!(evidence_prompt(&never), None, "the turn adds nothing to the prompt set");
}

#[test]
fn e44_e95_escalation_asked_is_lifted_whether_or_not_the_turn_could_escalate() {
    let s = suite();
    let asked = json!({"tool": "sharedos.escalate", "reason": "A person must approve the next step."});
    let escalated = run(&s, "annotate-escalation-asked-lifted");
    assert_eq!(
        (turn(&escalated)["status"].clone(), turn(&escalated)["escalationAsked"].clone()),
        (json!("escalated"), asked.clone())
    );
    let refused = run(&s, "annotate-escalation-asked-without-the-affordance");
    assert_eq!((turn(&refused)["status"].clone(), turn(&refused)["escalationAsked"].clone()), (json!("failed"), asked));
}

/// A cell's first-turn prompt hash as its evidence (and so the column's
/// prompt set) carries it.
fn evidence_prompt(run: &CellRun) -> Option<Value> {
    run.evidence.turns[0].prompt_hash.clone().map(Value::String)
}

/// The rows on the standard loop's own statements, with the ending each
/// reaches and how many turns it runs.
const LOOP_ROWS: [(&str, &str, usize); 7] = [
    ("annotate-loop-prompt-hash-on-completed", "succeeded", 1),
    ("annotate-loop-prompt-hash-on-stalled", "cancelled", 1),
    ("annotate-loop-prompt-hash-on-failed", "failed", 1),
    ("annotate-loop-prompt-hash-on-hung-up", "failed", 1),
    ("annotate-loop-prompt-hash-on-malformed-decision", "failed", 1),
    ("annotate-loop-escalation-asked", "escalated", 1),
    ("annotate-loop-prompt-set-complete", "cancelled", 3),
];

/// The columns that seat the standard loop.
const LOOP_COLUMNS: [&str; 5] =
    ["model-scripted", "codex-scripted", "claude-code-scripted", "deepseek-scripted", "pi-scripted"];

#[test]
fn e93_e44_r10_the_loop_states_its_prompt_hash_on_every_ending_in_every_driven_column() {
    let s = suite();
    let mut graded = 0;
    for (case, status, turns) in LOOP_ROWS {
        let condition = s.case(case).unwrap_or_else(|| panic!("no case {case}")).conditions[0].id.clone();
        for column in LOOP_COLUMNS {
            let run = column_run(&s, case, &condition, column);
            assert_eq!(run.cell.status.as_str(), "pass", "{case} {column}: {:?}", run.cell.detail);
            let snapshot = run.snapshot.value();
            let recorded = snapshot["turns"].as_array().unwrap();
            assert_eq!(recorded.len(), turns, "{case} {column}");
            assert_eq!(recorded[turns - 1]["status"], status, "{case} {column}");
            for (i, turn) in recorded.iter().enumerate() {
                let hash = turn["promptHash"].as_str().unwrap_or_else(|| panic!("{case} {column} turn {i}: no hash"));
                assert_eq!(hash.len(), 64, "{case} {column} turn {i}");
            }
            let entries = run.evidence.turns.iter().filter(|t| t.prompt_hash.is_some()).count();
            assert_eq!(entries, turns, "{case} {column}: every turn is in the prompt set");
            if case == "annotate-loop-escalation-asked" {
                let asked = json!({"tool": "sharedos.escalate", "reason": "A person must approve the next step."});
                assert_eq!(recorded[0]["escalationAsked"], asked, "{column}");
            }
            graded += 1;
        }
    }
    assert_eq!(graded, LOOP_ROWS.len() * LOOP_COLUMNS.len());
}

#[test]
fn the_loop_rows_are_not_applicable_where_no_standard_loop_is_seated() {
    let s = suite();
    let adversary = column(&[], "adversary-embedded").unwrap();
    for (case, _, _) in LOOP_ROWS {
        let row = s.case(case).unwrap();
        let script = s.script(&row.adversary).unwrap();
        let reason = adversary.kind.limits(script, &row.conditions[0]).unsupported;
        assert!(reason.is_some_and(|r| r.contains("standard loop")), "{case}");
    }
}
