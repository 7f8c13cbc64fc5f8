//! The JSON Lines event stream of `--format jsonl`, for CI systems: one
//! object per event, each with an `event` field (`started`, `cell`,
//! `drift`, `finished`). A cell the baseline lists carries
//! `baseline: {verdict, reason}`, the verdict `known_failure` or `stale`;
//! a cell's `outcome` is what its runs come to under the one rule the exit
//! code applies (`pass`, `flaky`, `fail`); `failing` counts what fails the
//! run.

use crate::suite::event::{CellEvent, RunEvent};
use serde_json::{json, Value};
use sharedos_grading::vocab::RULES_VERSION;

/// One JSON object per event, in order.
#[must_use]
pub fn jsonl_values(events: &[RunEvent<'_>]) -> Vec<Value> {
    events.iter().map(value_of).collect()
}

fn value_of(event: &RunEvent<'_>) -> Value {
    match event {
        RunEvent::Started { selected } => {
            json!({ "event": "started", "rulesVersion": RULES_VERSION, "selected": selected })
        }
        RunEvent::Cell(cell) => cell_value(cell),
        RunEvent::Drift(entry) => json!({ "event": "drift", "detail": entry }),
        RunEvent::Finished(totals) => json!({
            "event": "finished",
            "summary": totals.summary,
            "failing": totals.failing,
            "knownFailures": totals.known_failures,
            "stale": totals.stale,
            "drift": totals.drift,
        }),
    }
}

fn cell_value(event: &CellEvent<'_>) -> Value {
    let cell = event.cell;
    let mut value = json!({
        "event": "cell",
        "case": event.key.case,
        "condition": event.key.condition,
        "column": cell.column_id,
        "status": cell.status.as_str(),
        "outcome": cell.outcome().as_str(),
        "label": cell.label(),
        "golden": event.golden.map_or("none", |g| g.as_str()),
        "cell": cell,
    });
    if let Some((verdict, reason)) = event.baseline.listed() {
        value["baseline"] = json!({ "verdict": verdict, "reason": reason });
    }
    value
}
