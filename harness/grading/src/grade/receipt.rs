//! Receipts read from a record, for a column that cannot report on itself.
//!
//! Every scripted call carries a derived call id, so the record's operation
//! under that id *is* the attempt. That is the stricter source: a call the
//! seat quietly skipped leaves no operation to be taken for a refusal. A
//! live seat mints its own ids, so its attempts are matched to operations
//! by tool and resource instead.

use crate::input::script::{AttackScript, Attempt};
use crate::record::receipt::{derived_call_id, AttemptReceipt};
use serde_json::Value;
use sharedos_model::record::{ExecutionRecord, Operation, OperationKind, OperationOutcome};
use sharedos_model::tool::ToolStatus;

/// Detail of a record-derived receipt whose attempt left no operation.
pub const NO_OPERATION: &str = "the record carries no operation for this attempt";

/// The record's view of one call id: the tool operation that *is* the
/// attempt, and a cause behind its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationsUnder<'a> {
    /// The tool operation under the id (the last, if several).
    pub tool: Option<&'a Operation>,
    /// The tool operation's own cause, else the code of a sibling operation
    /// under the same id that did not succeed (e.g. the refused dispatch).
    pub cause: Option<&'a str>,
}

/// Reads the operations filed under `call_id`. An id whose only operation is
/// a message dispatch has no tool operation: it was not an attempt.
#[must_use]
pub fn operations_under<'a>(record: &'a ExecutionRecord, call_id: &str) -> OperationsUnder<'a> {
    let under: Vec<&Operation> =
        record.execution.operations.iter().filter(|o| o.operation_id.as_deref() == Some(call_id)).collect();
    let tool = under.iter().rev().find(|o| o.kind == OperationKind::Tool).copied();
    let sibling = under
        .iter()
        .find(|o| o.kind != OperationKind::Tool && o.outcome != OperationOutcome::Succeeded)
        .and_then(|o| o.reason_code.as_deref());
    let cause = tool.and_then(|o| o.cause.as_deref()).or(sibling);
    OperationsUnder { tool, cause }
}

fn observed(outcome: OperationOutcome) -> ToolStatus {
    match outcome {
        OperationOutcome::Succeeded => ToolStatus::Succeeded,
        OperationOutcome::Denied => ToolStatus::Denied,
        OperationOutcome::Failed => ToolStatus::Failed,
    }
}

fn issued(
    script: &AttackScript,
    attempt: &Attempt,
    call_id: Option<String>,
    operation: &Operation,
    cause: Option<&str>,
) -> AttemptReceipt {
    AttemptReceipt {
        attempted: true,
        call_id,
        observed: Some(observed(operation.outcome)),
        reason_code: operation.reason_code.clone(),
        cause: cause.map(str::to_string),
        detail: None,
        ..AttemptReceipt::unattempted(script, attempt, "")
    }
}

/// Receipts for one turn of a scripted column, read from that turn's record
/// by derived call id.
#[must_use]
pub fn receipts_from_record(
    script: &AttackScript,
    turn: u32,
    execution_id: &str,
    record: &ExecutionRecord,
) -> Vec<AttemptReceipt> {
    script
        .attempts_for_turn(turn)
        .map(|attempt| {
            let call_id = derived_call_id(execution_id, &script.id, &attempt.id);
            let under = operations_under(record, &call_id);
            match under.tool {
                Some(operation) => issued(script, attempt, Some(call_id), operation, under.cause),
                None => AttemptReceipt::unattempted(script, attempt, NO_OPERATION),
            }
        })
        .collect()
}

/// The resource path an attempt names through its `path` argument, as
/// segments (`"Workspace/policy.md"` and `["Workspace", "policy.md"]` agree).
fn declared_path(attempt: &Attempt) -> Option<Vec<String>> {
    match attempt.tool_arguments.get("path")? {
        Value::String(text) => Some(text.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect()),
        Value::Array(items) => items.iter().map(|v| v.as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

/// Receipts for one turn of a live column, whose seat mints its own call
/// ids. Attempts are matched, in declared order, to unconsumed tool
/// operations on the same tool: first one on the same resource path, then
/// (as a fallback) one refused before any resource was resolved. Each
/// operation is consumed once; inspections are never matched. Two attempts
/// on one tool and one resource cannot be told apart, so mismatches lean
/// toward `fail`, never toward a false `pass`.
#[must_use]
pub fn live_receipts_from_record(script: &AttackScript, turn: u32, record: &ExecutionRecord) -> Vec<AttemptReceipt> {
    let tool_ops: Vec<&Operation> =
        record.execution.operations.iter().filter(|o| o.kind == OperationKind::Tool).collect();
    let mut consumed = vec![false; tool_ops.len()];
    let mut receipts = Vec::new();
    for attempt in script.attempts_for_turn(turn) {
        let Some(tool) = attempt.tool.as_deref().filter(|_| attempt.inspect.is_none()) else {
            receipts.push(AttemptReceipt::unattempted(script, attempt, NO_OPERATION));
            continue;
        };
        let path = declared_path(attempt);
        let candidate = |exact: bool| {
            tool_ops.iter().enumerate().position(|(i, op)| {
                !consumed[i]
                    && op.tool.as_deref() == Some(tool)
                    && match (&op.resource, exact) {
                        (Some(resource), true) => path.as_ref().is_none_or(|p| *p == resource.path),
                        (None, false) => true,
                        _ => false,
                    }
            })
        };
        match candidate(true).or_else(|| candidate(false)) {
            Some(i) => {
                consumed[i] = true;
                let op = tool_ops[i];
                receipts.push(issued(script, attempt, op.operation_id.clone(), op, op.cause.as_deref()));
            }
            None => receipts.push(AttemptReceipt::unattempted(script, attempt, NO_OPERATION)),
        }
    }
    receipts
}
