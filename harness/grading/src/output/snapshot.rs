//! What a golden snapshot holds: the graded cell and the parts of each turn's
//! record that carry behaviour — never ids minted per run, never prose that
//! does not change a verdict.

use crate::grade::judge::cell::Cell;
use crate::input::script::terminal::REPORT_METADATA_KEY;
use crate::input::world::World;
use crate::record::receipt::AttemptReceipt;
use crate::record::turn::ExecutedTurn;
use serde::Serialize;
use serde_json::{Map, Value};
use sharedos_model::capability::ResourceRef;
use sharedos_model::record::{Decision, ExecutionRecord, Operation};
use sharedos_world::ledger::{Ledger, Movement};

// The snapshot is written from these borrowed views; its text sorts every
// object's keys (see `crate::output::golden::Snapshot`). Fields are declared in
// that key order anyway, so the canonical writer need not reorder them.

/// What one cell's golden file holds.
#[derive(Debug, Serialize)]
pub struct CellSnapshot<'a> {
    cell: &'a Cell,
    receipts: &'a [AttemptReceipt],
    turns: Vec<TurnSnapshot<'a>>,
    world: WorldEffects,
}

/// The world effects a cell left.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WorldEffects {
    delivered_messages: Vec<Delivered>,
    /// Only in worlds that attach the ledger, so other snapshots are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    ledger: Option<Value>,
    /// Only in messaging worlds.
    #[serde(skip_serializing_if = "Option::is_none")]
    messaging: Option<Value>,
}

/// One envelope the transport took.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Delivered {
    message_id: String,
    receiver: sharedos_model::address::Address,
}

impl CellSnapshot<'_> {
    /// Adds the messaging world's effects (only messaging worlds have any).
    pub fn with_messaging(mut self, effects: Option<Value>) -> Self {
        self.world.messaging = effects;
        self
    }
}

/// The snapshot of one cell.
#[must_use]
pub fn cell_snapshot<'a>(
    cell: &'a Cell,
    turns: &'a [ExecutedTurn],
    records: &'a [ExecutionRecord],
    receipts: &'a [AttemptReceipt],
    world: &World,
) -> CellSnapshot<'a> {
    let delivered = world
        .fixtures
        .transport
        .accepted()
        .into_iter()
        .map(|m| Delivered { message_id: m.id, receiver: m.receiver })
        .collect();
    CellSnapshot {
        cell,
        turns: turns.iter().zip(records).map(|(turn, record)| turn_snapshot(turn, record)).collect(),
        receipts,
        world: WorldEffects {
            delivered_messages: delivered,
            ledger: world.ledger.as_deref().map(ledger_snapshot),
            messaging: None,
        },
    }
}

/// The ledger's balances and every movement, in order.
fn ledger_snapshot(ledger: &Ledger) -> Value {
    let journal: Vec<Value> = ledger
        .journal()
        .iter()
        .map(|line| {
            let movement = match line.movement {
                Movement::Debit => "debit",
                Movement::Credit => "credit",
            };
            serde_json::json!({ "callId": line.call_id, "movement": movement, "account": line.account, "amount": line.amount })
        })
        .collect();
    serde_json::json!({ "balances": ledger.balances(), "journal": journal })
}

/// The behaviour one turn's record carries.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TurnSnapshot<'a> {
    annotations: Map<String, Value>,
    /// `real` for a turn on a wall clock, whose instants a rerun will not repeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<&'a str>,
    code: Option<&'a str>,
    decisions: Vec<DecisionSnapshot<'a>>,
    ended_at: &'a str,
    ended_by: &'a Option<sharedos_model::record::EndedBy>,
    escalation_asked: &'a Option<sharedos_model::record::EscalationAsked>,
    events: Vec<&'a str>,
    exposed_tools: &'a [String],
    operations: Vec<OperationSnapshot<'a>>,
    prompt_hash: &'a Option<String>,
    retryable: Option<bool>,
    status: &'a sharedos_model::execution::ExecutionStatus,
    turn: u32,
}

fn turn_snapshot<'a>(turn: &'a ExecutedTurn, record: &'a ExecutionRecord) -> TurnSnapshot<'a> {
    let result = &turn.result;
    let execution = &record.execution;
    TurnSnapshot {
        turn: turn.turn,
        status: &result.status,
        code: result.code(),
        retryable: result.error.as_ref().and_then(|e| e.retryable),
        ended_by: &execution.ended_by,
        ended_at: &result.completed_at,
        annotations: annotations(result.metadata.as_ref()),
        clock: record.system.metadata.as_ref().and_then(|m| m.get("clock")).and_then(Value::as_str),
        prompt_hash: &record.system.prompt_hash,
        escalation_asked: &execution.escalation_asked,
        exposed_tools: &execution.exposed_tools,
        decisions: execution.decisions.iter().map(decision_snapshot).collect(),
        operations: execution.operations.iter().map(operation_snapshot).collect(),
        events: result.events.iter().map(|e| e.kind.as_str()).collect(),
    }
}

/// The runtime's statements for the record: result metadata without the
/// envelope's provenance and without the adversary's report (graded apart).
fn annotations(metadata: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut kept = Map::new();
    for (key, value) in metadata.into_iter().flatten() {
        if key != "runtime" && key != REPORT_METADATA_KEY {
            kept.insert(key.clone(), value.clone());
        }
    }
    kept
}

/// A decision, without its authority hash.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DecisionSnapshot<'a> {
    action: &'a Option<String>,
    at: &'a str,
    fail_closed: bool,
    grant_id: &'a Option<String>,
    operation_id: &'a Option<String>,
    outcome: &'a sharedos_model::record::DecisionOutcome,
    reason_code: &'a str,
    resource: &'a Option<ResourceRef>,
}

fn decision_snapshot(decision: &Decision) -> DecisionSnapshot<'_> {
    DecisionSnapshot {
        at: &decision.at,
        outcome: &decision.outcome,
        reason_code: &decision.reason_code,
        operation_id: &decision.operation_id,
        resource: &decision.resource,
        action: &decision.action,
        grant_id: &decision.grant_id,
        fail_closed: decision.fail_closed,
    }
}

/// An operation, without its audit and state references.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct OperationSnapshot<'a> {
    action: &'a Option<String>,
    at: &'a str,
    cause: &'a Option<String>,
    fail_closed: bool,
    grant_id: &'a Option<String>,
    kind: &'a sharedos_model::record::OperationKind,
    operation_id: &'a Option<String>,
    outcome: &'a sharedos_model::record::OperationOutcome,
    reason_code: &'a Option<String>,
    resource: &'a Option<ResourceRef>,
    source: &'a sharedos_model::audit::Source,
    tool: &'a Option<String>,
}

fn operation_snapshot(operation: &Operation) -> OperationSnapshot<'_> {
    OperationSnapshot {
        at: &operation.at,
        kind: &operation.kind,
        source: &operation.source,
        outcome: &operation.outcome,
        operation_id: &operation.operation_id,
        tool: &operation.tool,
        resource: &operation.resource,
        action: &operation.action,
        grant_id: &operation.grant_id,
        reason_code: &operation.reason_code,
        cause: &operation.cause,
        fail_closed: operation.fail_closed,
    }
}
