//! Whether a record is usable as evidence, and which fields it lacks.
//!
//! A *required* gap makes the record unusable: without it nobody can check
//! what the turn was decided against. An *expected* gap (state references,
//! tokens, infrastructure time) is reported but never makes a record
//! unusable, since SharedOS has no writer for those fields.

use serde::{Deserialize, Serialize};
use sharedos_model::codes::ReasonCode;
use sharedos_model::record::ExecutionRecord;
use std::collections::BTreeSet;

/// How much a gap matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GapSeverity {
    /// The record cannot be used as evidence.
    Required,
    /// Worth knowing; the record stays usable.
    Expected,
}

/// One missing or broken field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Gap {
    /// Dotted field path (`execution.decisions.2.authorityHash`).
    pub field: String,
    /// Required or expected.
    pub severity: GapSeverity,
    /// What is missing, in words.
    pub detail: String,
}

/// The outcome of a completeness check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[must_use]
pub struct Completeness {
    /// No gap at all.
    pub complete: bool,
    /// No required gap.
    pub usable: bool,
    /// Every gap, required ones first in the order found.
    pub gaps: Vec<Gap>,
}

impl Completeness {
    /// Field paths of the required gaps, in the order found.
    #[must_use]
    pub fn required_fields(&self) -> Vec<String> {
        self.gaps.iter().filter(|g| g.severity == GapSeverity::Required).map(|g| g.field.clone()).collect()
    }
}

/// Checks a record's completeness.
pub fn check_completeness(record: &ExecutionRecord) -> Completeness {
    let mut gaps: Vec<Gap> = record
        .issues()
        .into_iter()
        .map(|issue| required(&dotted(&issue.pointer), format!("the schema expects {}", issue.expected)))
        .collect();
    authority_gaps(record, &mut gaps);
    expected_gaps(record, &mut gaps);
    let usable = gaps.iter().all(|g| g.severity != GapSeverity::Required);
    Completeness { complete: gaps.is_empty(), usable, gaps }
}

/// True when the turn failed closed because its grant store could not be
/// read: such a turn never had an authority state to name, so a missing
/// snapshot is not a gap.
#[must_use]
pub fn grant_store_unreachable(record: &ExecutionRecord) -> bool {
    let code = ReasonCode::AuthorityUnavailable.as_str();
    let execution = &record.execution;
    execution.terminal_reason_code.as_deref() == Some(code)
        || execution.decisions.iter().any(|d| d.fail_closed && d.reason_code == code)
        || execution.operations.iter().any(|o| o.fail_closed && o.reason_code.as_deref() == Some(code))
}

fn required(field: &str, detail: impl Into<String>) -> Gap {
    Gap { field: field.to_string(), severity: GapSeverity::Required, detail: detail.into() }
}

fn expected(field: &str, detail: &str) -> Gap {
    Gap { field: field.to_string(), severity: GapSeverity::Expected, detail: detail.to_string() }
}

/// `/execution/decisions/0/at` → `execution.decisions.0.at`.
fn dotted(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn authority_gaps(record: &ExecutionRecord, gaps: &mut Vec<Gap>) {
    let execution = &record.execution;
    let exempt = grant_store_unreachable(record);
    if record.authority.snapshots.is_empty() && !exempt {
        gaps.push(required("authority.snapshots", "no authority snapshot was resolved for the turn"));
    }
    if !execution.operations.is_empty() && execution.decisions.is_empty() {
        gaps.push(required("execution.decisions", "operations were recorded without any authorization decision"));
    }
    let known: BTreeSet<&str> = record.authority.snapshots.iter().map(|s| s.hash.as_str()).collect();
    let unreachable = ReasonCode::AuthorityUnavailable.as_str();
    for (i, decision) in execution.decisions.iter().enumerate() {
        let field = format!("execution.decisions.{i}.authorityHash");
        match &decision.authority_hash {
            None if decision.fail_closed && decision.reason_code == unreachable => {}
            None => gaps.push(required(&field, "the decision names no authority snapshot")),
            Some(hash) if !known.contains(hash.as_str()) => {
                gaps.push(required(&field, "the decision names a snapshot the record does not hold"));
            }
            Some(_) => {}
        }
    }
    if execution.events.is_empty() {
        gaps.push(required("execution.events", "the turn left no envelope events"));
    }
}

fn expected_gaps(record: &ExecutionRecord, gaps: &mut Vec<Gap>) {
    let has_state = record.state.as_ref().is_some_and(|s| s.before.is_some() && s.after.is_some());
    if !has_state {
        gaps.push(expected("state", "no state before and after the turn was referenced"));
    }
    if record.cost.input_tokens.is_none() && record.cost.output_tokens.is_none() {
        gaps.push(expected("cost.tokens", "no token counts were reported"));
    }
    if record.cost.infrastructure_ms.is_none() {
        gaps.push(expected("cost.infrastructureMs", "no infrastructure time was measured"));
    }
}
