//! The JSON Lines event stream of `--format jsonl`, for CI systems.
//!
//! One object per line, each with an `event` field, in a fixed order
//! whatever `--jobs` is: `started`, then one `cell` per selected cell in
//! canonical order (case, condition, column), then one `drift` per stale
//! golden or report file, then `finished` with the counts. A cell the
//! `--baseline` lists carries `baseline: {verdict, reason}`, the verdict
//! `known_failure` or `stale`; `failing` counts what fails the run.

use serde_json::{json, Value};
use sharedos_conformance::input::baseline::{Baseline, BaselineVerdict};
use sharedos_conformance::suite::report::Report;
use sharedos_conformance::vocab::RULES_VERSION;
use std::collections::BTreeMap;

/// How a run cell compares with its golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoldenState {
    /// Byte-identical.
    Same,
    /// Rewritten by `bless`.
    Blessed,
    /// No golden file exists (message says where).
    Missing(String),
    /// The golden file differs (message holds the diff).
    Differs(String),
    /// `bless` could not write it.
    Unwritable(String),
    /// Not compared, nor blessed: the column runs on a real clock, so its
    /// records carry wall time and no two runs are alike.
    RealClock,
}

impl GoldenState {
    /// The wire name of the state.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            GoldenState::Same => "same",
            GoldenState::Blessed => "blessed",
            GoldenState::Missing(_) => "missing",
            GoldenState::Differs(_) => "differs",
            GoldenState::Unwritable(_) => "unwritable",
            GoldenState::RealClock => "not_compared",
        }
    }

    /// The drift message, when the state is drift.
    #[must_use]
    pub fn drift(&self) -> Option<&str> {
        match self {
            GoldenState::Same | GoldenState::Blessed | GoldenState::Unwritable(_) | GoldenState::RealClock => None,
            GoldenState::Missing(text) | GoldenState::Differs(text) => Some(text),
        }
    }

    /// Why the file could not be written, when `bless` failed to.
    #[must_use]
    pub fn unwritten(&self) -> Option<&str> {
        match self {
            GoldenState::Unwritable(text) => Some(text),
            _ => None,
        }
    }
}

/// Every event of one run, in order.
#[must_use]
pub fn events(
    report: &Report,
    golden: &BTreeMap<String, GoldenState>,
    drift: &[String],
    baseline: &Baseline,
    summary: &BTreeMap<String, BTreeMap<String, usize>>,
) -> Vec<Value> {
    let selected: usize = report.manifest.rows.iter().map(|row| row.cells.len()).sum();
    let mut out = vec![json!({ "event": "started", "rulesVersion": RULES_VERSION, "selected": selected })];
    for row in &report.manifest.rows {
        for cell in &row.cells {
            let trial = format!("{}/{}/{}", row.case_id, row.condition_id, cell.column_id);
            let golden = golden.get(&trial).map_or("none", GoldenState::as_str);
            let mut event = json!({
                "event": "cell",
                "case": row.case_id,
                "condition": row.condition_id,
                "column": cell.column_id,
                "status": cell.status.as_str(),
                "label": cell.label(),
                "golden": golden,
                "cell": cell,
            });
            let key = row.key_of(cell);
            let (listed, reason) = match baseline.verdict(&key, cell.status) {
                BaselineVerdict::Unlisted => (None, None),
                BaselineVerdict::KnownFailure { reason } => (Some("known_failure"), Some(reason)),
                BaselineVerdict::Stale { reason } => (Some("stale"), Some(reason)),
            };
            if let (Some(listed), Some(reason)) = (listed, reason) {
                event["baseline"] = json!({ "verdict": listed, "reason": reason });
            }
            out.push(event);
        }
    }
    out.extend(drift.iter().map(|entry| json!({ "event": "drift", "detail": entry })));
    let cells = || report.manifest.rows.iter().flat_map(|r| r.cells.iter().map(move |c| (r.key_of(c), c)));
    let failing = cells().filter(|(key, c)| baseline.fails_run(key, c.status)).count();
    let known = cells()
        .filter(|(key, c)| matches!(baseline.verdict(key, c.status), BaselineVerdict::KnownFailure { .. }))
        .count();
    let stale =
        cells().filter(|(key, c)| matches!(baseline.verdict(key, c.status), BaselineVerdict::Stale { .. })).count();
    out.push(json!({
        "event": "finished",
        "summary": summary,
        "failing": failing,
        "knownFailures": known,
        "stale": stale,
        "drift": drift.len(),
    }));
    out
}
