//! Grading the values a turn expectation states besides its status and
//! code: each stated value is read from the record or the turn's facts,
//! compared, and named, so the evidence line says what was checked.

use super::facts::TurnFacts;
use crate::input::case::expect_turn::PROVENANCE_KEY;
use crate::input::case::TurnExpectation;
use crate::record::events;
use serde_json::Value;
use sharedos_envelope::events::EventKind;
use sharedos_model::record::{EscalationAsked, ExecutionRecord};

/// One graded value of the ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnValue {
    /// What was checked, in words (`retryable`, `ended at`, ...).
    pub name: String,
    /// What the row requires, rendered.
    pub expected: String,
    /// What the turn shows, rendered.
    pub observed: String,
    /// Whether they agree.
    pub met: bool,
}

impl TurnValue {
    fn new(name: impl Into<String>, expected: String, observed: String) -> TurnValue {
        let met = expected == observed;
        TurnValue { name: name.into(), expected, observed, met }
    }

    /// The value as a met expectation names it (`retryable \`true\``).
    #[must_use]
    pub fn met_text(&self) -> String {
        format!("{} {}", self.name, self.expected)
    }
}

/// How much later than a row's instant a turn on a real clock may end:
/// wall time adds what starting and speaking to a process take, which
/// virtual time does not have (rules version 4).
pub const REAL_CLOCK_SLACK_MS: i64 = 500;

/// The instant the turn ended: exactly the row's on virtual time; on a
/// real clock, not before it and at most [`REAL_CLOCK_SLACK_MS`] after.
fn ended_at(expected: u64, observed: Option<i64>, real_clock: bool) -> TurnValue {
    let shown = observed.map_or_else(|| "an unreadable instant".to_string(), |m| format!("{m} ms"));
    if !real_clock {
        return TurnValue::new("ended at", format!("{expected} ms"), shown);
    }
    let expected = i64::try_from(expected).unwrap_or(i64::MAX);
    let latest = expected.saturating_add(REAL_CLOCK_SLACK_MS);
    TurnValue {
        name: "ended at".to_string(),
        expected: format!("{expected} ms (up to {latest} ms on a real clock)"),
        observed: shown,
        met: observed.is_some_and(|at| (expected..=latest).contains(&at)),
    }
}

/// Whether the record says its instants are wall-clock.
fn on_real_clock(record: &ExecutionRecord) -> bool {
    record.system.metadata.as_ref().and_then(|m| m.get("clock")).and_then(Value::as_str) == Some("real")
}

/// Every value `expected` states, graded in a fixed order, from the last
/// record but for what a row states about every turn.
#[must_use]
pub fn grade_values(
    expected: &TurnExpectation,
    (earlier, record): (&[ExecutionRecord], &ExecutionRecord),
    facts: &TurnFacts,
) -> Vec<TurnValue> {
    let mut values = Vec::new();
    if let Some(retryable) = expected.retryable {
        values.push(TurnValue::new("retryable", flag(retryable), flag(facts.retryable)));
    }
    if let Some(ms) = expected.ended_at_ms {
        values.push(ended_at(ms, facts.ended_at_ms, on_real_clock(record)));
    }
    for (key, value) in expected.annotations.iter().flatten() {
        let observed = facts.metadata.get(key).map_or_else(|| "absent".to_string(), shown);
        values.push(TurnValue::new(format!("annotation {}", key_text(key)), shown(value), observed));
    }
    for key in expected.annotations_absent.iter().flatten() {
        let observed = facts.metadata.get(key).map_or_else(|| "absent".to_string(), shown);
        values.push(TurnValue::new(format!("annotation {}", key_text(key)), "absent".to_string(), observed));
    }
    if expected.runtime_provenance {
        values.push(provenance(record, facts));
    }
    if let Some(hash) = &expected.prompt_hash {
        let observed = record.system.prompt_hash.as_deref().map(short_hash);
        values.push(TurnValue::new(
            "`system.promptHash`",
            optional(hash.as_deref().map(short_hash)),
            optional(observed),
        ));
    }
    if expected.prompt_hash_stated {
        let turns = earlier.len() + 1;
        let stated = earlier.iter().chain([record]).filter(|r| r.system.prompt_hash.is_some()).count();
        let every = format!("stated on every turn ({turns} of {turns})");
        let observed = if stated == turns { every.clone() } else { format!("stated on {stated} of {turns} turns") };
        values.push(TurnValue::new("`system.promptHash`", every, observed));
    }
    if let Some(asked) = &expected.escalation_asked {
        let observed = record.execution.escalation_asked.as_ref().map(asked_text);
        values.push(TurnValue::new(
            "`execution.escalationAsked`",
            optional(asked.as_ref().map(asked_text)),
            optional(observed),
        ));
    }
    for (kind, count) in expected.event_counts.iter().flatten() {
        let observed = record.execution.events.iter().filter(|e| &e.kind == kind).count();
        values.push(TurnValue::new(format!("`{kind}` events"), count.to_string(), observed.to_string()));
    }
    for (account, balance) in expected.balances.iter().flatten() {
        let observed = facts.balances.as_ref().map_or_else(
            || "no ledger".to_string(),
            |b| b.get(account).map_or("no account".to_string(), i64::to_string),
        );
        values.push(TurnValue::new(format!("balance of `{account}`"), balance.to_string(), observed));
    }
    if expected.quiet_after {
        let observed = match &facts.after_result {
            None => "not observed".to_string(),
            Some(changes) if changes.is_empty() => "nothing".to_string(),
            Some(changes) => changes.join(", "),
        };
        values.push(TurnValue::new("activity after the result", "nothing".to_string(), observed));
    }
    values
}

/// `metadata.runtime` against the provenance `turn.started` announced.
fn provenance(record: &ExecutionRecord, facts: &TurnFacts) -> TurnValue {
    let announced =
        events::first_of(&record.execution.events, EventKind::TurnStarted).and_then(|e| e.data.get("runtime"));
    let stated = facts.metadata.get(PROVENANCE_KEY);
    let observed = match (announced, stated) {
        (Some(announced), Some(stated)) if same_provenance(announced, stated) => "the envelope's",
        (None, _) => "unverifiable (no `turn.started`)",
        (_, None) => "absent",
        _ => "not the envelope's",
    };
    TurnValue::new("`runtime` metadata", "the envelope's".to_string(), observed.to_string())
}

/// The result provenance is the announced one plus the manifest's metadata, if any.
fn same_provenance(announced: &Value, stated: &Value) -> bool {
    let Some(stated) = stated.as_object() else { return false };
    let mut core = stated.clone();
    core.remove("metadata");
    Value::Object(core) == *announced
}

/// An annotation key in backticks; the empty key is shown as `""`.
fn key_text(key: &str) -> String {
    if key.is_empty() {
        "`\"\"`".to_string()
    } else {
        format!("`{key}`")
    }
}

fn flag(value: Option<bool>) -> String {
    match value {
        Some(v) => format!("`{v}`"),
        None => "absent".to_string(),
    }
}

fn optional(value: Option<String>) -> String {
    value.unwrap_or_else(|| "absent".to_string())
}

fn shown(value: &Value) -> String {
    format!("`{value}`")
}

fn short_hash(hash: &str) -> String {
    format!("`{}…`", hash.chars().take(12).collect::<String>())
}

fn asked_text(asked: &EscalationAsked) -> String {
    format!("`{}` ({})", asked.tool, asked.reason)
}
