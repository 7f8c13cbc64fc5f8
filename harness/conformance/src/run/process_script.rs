//! A scripted process seat's turn, prepared as data (`harness/process/
//! PROTOCOL.md`, *Scripted seats*): the turn's steps with each call built
//! as the embedded adversary builds it and each receipt as it stands before
//! the step is made, the terminal, and the report the seat completes.

use crate::run::attempt_call::attempt_call;
use serde_json::{json, Map, Value};
use sharedos_grading::input::script::{AttackScript, Attempt, StepKind, Terminal, TerminalKind};
use sharedos_grading::record::receipt::{AttemptReceipt, REPORT_VERSION};
use sharedos_model::execution::RuntimeTurnRequest;

/// The `script` of `turn`'s `turn` message, for the request the seat is handed.
#[must_use]
pub fn turn_script(script: &AttackScript, turn: u32, request: &RuntimeTurnRequest) -> Value {
    let steps: Vec<Value> = script.attempts_for_turn(turn).map(|attempt| step(script, attempt, request)).collect();
    let mut out = Map::new();
    out.insert("id".into(), json!(script.id));
    out.insert("turn".into(), json!(turn));
    out.insert("steps".into(), Value::Array(steps));
    if let Some(terminal) = &script.terminal {
        out.insert("terminal".into(), terminal_value(terminal));
    }
    out.insert(
        "report".into(),
        json!({
            "version": REPORT_VERSION,
            "executionId": request.execution_id,
            "traceId": request.context.trace_id,
            "visibleTools": request.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            "moveIds": [script.id],
        }),
    );
    Value::Object(out)
}

fn step(script: &AttackScript, attempt: &Attempt, request: &RuntimeTurnRequest) -> Value {
    let mut out = Map::new();
    out.insert("attempt".into(), json!(attempt.id));
    let kind = match attempt.kind() {
        Some(StepKind::Call) => "call",
        Some(StepKind::Inspect) => "inspect",
        Some(StepKind::Annotate) => "annotate",
        Some(StepKind::Emit) => "emit",
        Some(StepKind::Read) => "read",
        None => "none",
    };
    out.insert("kind".into(), json!(kind));
    if let Some(at) = attempt.at_ms {
        out.insert("atMs".into(), json!(at));
    }
    for (key, set) in
        [("concurrent", attempt.concurrent), ("afterClose", attempt.after_close), ("overBudget", attempt.over_budget)]
    {
        if set {
            out.insert(key.into(), json!(true));
        }
    }
    if let Some(reason) = &attempt.unreachable {
        out.insert("unreachable".into(), json!(reason));
    }
    if let Some(call) = attempt_call(script, attempt, request) {
        out.insert("call".into(), serde_json::to_value(call).unwrap_or(Value::Null));
    }
    if let Some(annotation) = &attempt.annotate {
        out.insert("annotate".into(), json!({"key": annotation.key, "value": annotation.value}));
    }
    if let Some(emission) = &attempt.emit {
        out.insert("emit".into(), json!({"type": emission.kind, "data": emission.data}));
    }
    if attempt.read.is_some() {
        out.insert("read".into(), json!("draining"));
    }
    let receipt = AttemptReceipt::unattempted(script, attempt, "");
    out.insert("receipt".into(), serde_json::to_value(receipt).unwrap_or(Value::Null));
    Value::Object(out)
}

fn terminal_value(terminal: &Terminal) -> Value {
    let mut out = Map::new();
    let kind = serde_json::to_value(terminal.kind).unwrap_or(Value::Null);
    out.insert("kind".into(), kind);
    if !terminal.reason.is_empty() {
        out.insert("reason".into(), json!(terminal.reason));
    }
    if let Some(at) = terminal.at_ms {
        out.insert("atMs".into(), json!(at));
    }
    if let Some(output) = &terminal.output {
        out.insert("output".into(), output.clone());
    }
    if let Some(metadata) = &terminal.metadata {
        out.insert("metadata".into(), Value::Object(metadata.clone()));
    }
    if let Some(error) = &terminal.error {
        out.insert("error".into(), serde_json::to_value(error).unwrap_or(Value::Null));
    }
    if terminal.until.is_some() {
        out.insert("until".into(), json!("draining"));
    }
    if terminal.kind == TerminalKind::Malformed {
        out.insert("outcome".into(), terminal.outcome.clone().unwrap_or_else(Terminal::default_malformed));
    }
    Value::Object(out)
}
