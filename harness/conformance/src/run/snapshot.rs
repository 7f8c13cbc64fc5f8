//! What a golden snapshot holds: the graded cell and the parts of each turn's
//! record that carry behaviour — never ids minted per run, never prose that
//! does not change a verdict.

use super::turns::ExecutedTurn;
use crate::manifest::Cell;
use crate::receipt::{AttemptReceipt, REPORT_METADATA_KEY};
use crate::world::World;
use serde_json::{json, Map, Value};
use sharedos_kernel::world::ledger::{Ledger, Movement};
use sharedos_model::record::{Decision, ExecutionRecord, Operation};

/// The snapshot value of one cell.
#[must_use]
pub fn cell_snapshot(
    cell: &Cell,
    turns: &[ExecutedTurn],
    records: &[ExecutionRecord],
    receipts: &[AttemptReceipt],
    world: &World,
) -> Value {
    let turn_values: Vec<Value> = turns.iter().zip(records).map(|(turn, record)| turn_snapshot(turn, record)).collect();
    let delivered: Vec<Value> = world
        .fixtures
        .transport
        .accepted()
        .iter()
        .map(|m| json!({ "messageId": m.id, "receiver": m.receiver }))
        .collect();
    let mut world_effects = json!({ "deliveredMessages": delivered });
    if let (Some(ledger), Value::Object(effects)) = (&world.ledger, &mut world_effects) {
        effects.insert("ledger".into(), ledger_snapshot(ledger));
    }
    json!({
        "cell": cell,
        "turns": turn_values,
        "receipts": receipts,
        "world": world_effects,
    })
}

/// The ledger's balances and every movement, in order (only in worlds that
/// attach it, so other snapshots are unchanged).
fn ledger_snapshot(ledger: &Ledger) -> Value {
    let journal: Vec<Value> = ledger
        .journal()
        .iter()
        .map(|line| {
            let movement = match line.movement {
                Movement::Debit => "debit",
                Movement::Credit => "credit",
            };
            json!({ "callId": line.call_id, "movement": movement, "account": line.account, "amount": line.amount })
        })
        .collect();
    json!({ "balances": ledger.balances(), "journal": journal })
}

fn turn_snapshot(turn: &ExecutedTurn, record: &ExecutionRecord) -> Value {
    let result = &turn.result;
    let execution = &record.execution;
    json!({
        "turn": turn.turn,
        "status": result.status,
        "code": result.code(),
        "retryable": result.error.as_ref().and_then(|e| e.retryable),
        "endedBy": execution.ended_by,
        "endedAt": result.completed_at,
        "annotations": annotations(result.metadata.as_ref()),
        "promptHash": record.system.prompt_hash,
        "escalationAsked": execution.escalation_asked,
        "exposedTools": execution.exposed_tools,
        "decisions": execution.decisions.iter().map(decision_snapshot).collect::<Vec<_>>(),
        "operations": execution.operations.iter().map(operation_snapshot).collect::<Vec<_>>(),
        "events": result.events.iter().map(|e| e.kind.clone()).collect::<Vec<_>>(),
    })
}

/// The runtime's statements for the record: result metadata without the
/// envelope's provenance and without the adversary's report (graded apart).
fn annotations(metadata: Option<&Map<String, Value>>) -> Value {
    let mut kept = Map::new();
    for (key, value) in metadata.into_iter().flatten() {
        if key != "runtime" && key != REPORT_METADATA_KEY {
            kept.insert(key.clone(), value.clone());
        }
    }
    Value::Object(kept)
}

fn decision_snapshot(decision: &Decision) -> Value {
    json!({
        "at": decision.at,
        "outcome": decision.outcome,
        "reasonCode": decision.reason_code,
        "operationId": decision.operation_id,
        "resource": decision.resource,
        "action": decision.action,
        "grantId": decision.grant_id,
        "failClosed": decision.fail_closed,
    })
}

fn operation_snapshot(operation: &Operation) -> Value {
    json!({
        "at": operation.at,
        "kind": operation.kind,
        "source": operation.source,
        "outcome": operation.outcome,
        "operationId": operation.operation_id,
        "tool": operation.tool,
        "resource": operation.resource,
        "action": operation.action,
        "grantId": operation.grant_id,
        "reasonCode": operation.reason_code,
        "cause": operation.cause,
        "failClosed": operation.fail_closed,
    })
}
