//! One line per turn of a cell: what its execution record says in short
//! (how the turn ended and who ended it, how many decisions and operations
//! and how many of them were refused, tokens and time when recorded),
//! summarised either from a bundle's records or from a golden file's turns.

use serde::Serialize;
use serde_json::Value;
use sharedos_model::record::{DecisionOutcome, ExecutionRecord, OperationOutcome};

/// Where a cell's turn summaries come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordSource {
    /// A certify bundle's evidence: the execution records themselves.
    Bundle,
    /// A golden file's `turns`: the parts of each record that carry behaviour.
    Golden,
}

impl RecordSource {
    /// How the page introduces the summaries.
    #[must_use]
    pub fn caption(self) -> &'static str {
        match self {
            RecordSource::Bundle => "as the bundle's execution records hold it",
            RecordSource::Golden => "as the golden file records it",
        }
    }
}

/// One turn in short. Fields a source does not have are absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnSummary {
    /// 1-based turn number.
    pub turn: u32,
    /// How it ended (`succeeded`, `denied`, ...).
    pub status: String,
    /// The ending's reason code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Who ended a failed turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<String>,
    /// Authorization decisions.
    pub decisions: usize,
    /// Of which denied.
    pub denied: usize,
    /// Operations (tool calls, resource operations, messages).
    pub operations: usize,
    /// Of which refused.
    pub refused: usize,
    /// Of which failed.
    pub failed: usize,
    /// Calls the runtime asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<u64>,
    /// Model input tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Model output tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Virtual (or real) milliseconds the turn took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// Envelope events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<usize>,
    /// Whether the ending offered a retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// Whether the runtime stated a prompt hash.
    pub prompt_stated: bool,
    /// Whether the runtime said it asked for a human.
    pub escalation_asked: bool,
}

/// The summary of one turn's execution record.
#[must_use]
pub fn of_record(turn: u32, record: &ExecutionRecord) -> TurnSummary {
    let execution = &record.execution;
    let operations = &execution.operations;
    TurnSummary {
        turn,
        status: execution.status.as_str().to_string(),
        code: execution.terminal_reason_code.clone(),
        ended_by: execution.ended_by.map(|e| e.as_str().to_string()),
        decisions: execution.decisions.len(),
        denied: execution.decisions.iter().filter(|d| d.outcome == DecisionOutcome::Denied).count(),
        operations: operations.len(),
        refused: operations.iter().filter(|o| o.outcome == OperationOutcome::Denied).count(),
        failed: operations.iter().filter(|o| o.outcome == OperationOutcome::Failed).count(),
        tool_calls: Some(record.cost.tool_calls),
        input_tokens: record.cost.input_tokens,
        output_tokens: record.cost.output_tokens,
        elapsed_ms: Some(record.cost.elapsed_ms),
        events: Some(execution.events.len()),
        retryable: None,
        prompt_stated: record.system.prompt_hash.is_some(),
        escalation_asked: execution.escalation_asked.is_some(),
    }
}

/// Every turn of a cell's records, numbered from 1.
#[must_use]
pub fn of_records(records: &[ExecutionRecord]) -> Vec<TurnSummary> {
    (1..).zip(records).map(|(turn, record)| of_record(turn, record)).collect()
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

fn count_where(value: &Value, key: &str, field: &str, wanted: &str) -> (usize, usize) {
    let items = value.get(key).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let matching = items.iter().filter(|item| item.get(field).and_then(Value::as_str) == Some(wanted)).count();
    (items.len(), matching)
}

/// The summary of one of a golden file's `turns` (read leniently: a field
/// it lacks is left out rather than refused).
#[must_use]
pub fn of_golden_turn(index: usize, value: &Value) -> TurnSummary {
    let fallback = u32::try_from(index + 1).unwrap_or(u32::MAX);
    let turn = value.get("turn").and_then(Value::as_u64).and_then(|t| u32::try_from(t).ok()).unwrap_or(fallback);
    let (decisions, denied) = count_where(value, "decisions", "outcome", "denied");
    let (operations, refused) = count_where(value, "operations", "outcome", "denied");
    let (_, failed) = count_where(value, "operations", "outcome", "failed");
    TurnSummary {
        turn,
        status: text(value, "status").unwrap_or_else(|| "unknown".to_string()),
        code: text(value, "code"),
        ended_by: text(value, "endedBy"),
        decisions,
        denied,
        operations,
        refused,
        failed,
        events: value.get("events").and_then(Value::as_array).map(Vec::len),
        retryable: value.get("retryable").and_then(Value::as_bool),
        prompt_stated: value.get("promptHash").is_some_and(|v| !v.is_null()),
        escalation_asked: value.get("escalationAsked").is_some_and(|v| !v.is_null()),
        ..TurnSummary::default()
    }
}

/// Every turn of a golden file's `turns` array.
#[must_use]
pub fn of_golden_turns(turns: Option<&Value>) -> Vec<TurnSummary> {
    let turns = turns.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    turns.iter().enumerate().map(|(index, turn)| of_golden_turn(index, turn)).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_golden_turn_is_counted_and_what_it_lacks_is_left_out() {
        let turn = json!({
            "turn": 2, "status": "failed", "code": "turn_failed", "endedBy": "envelope",
            "decisions": [{"outcome": "allowed"}, {"outcome": "denied"}],
            "operations": [{"outcome": "denied"}, {"outcome": "failed"}, {"outcome": "succeeded"}],
            "events": ["turn.started", "turn.failed"], "retryable": false, "promptHash": null
        });
        let summary = of_golden_turn(0, &turn);
        assert_eq!(
            (summary.turn, summary.status.as_str(), summary.code.as_deref()),
            (2, "failed", Some("turn_failed"))
        );
        assert_eq!((summary.decisions, summary.denied), (2, 1));
        assert_eq!((summary.operations, summary.refused, summary.failed), (3, 1, 1));
        assert_eq!((summary.events, summary.retryable, summary.prompt_stated), (Some(2), Some(false), false));
        assert_eq!(summary.tool_calls, None);
        assert_eq!(of_golden_turn(4, &json!({})).turn, 5);
    }
}
