//! What the message ports show after a cell ran, for its golden snapshot and
//! for the row's effects expectation: every envelope handed to the transport
//! (its trusted fields, the minted id, the receipt), how many calls the
//! transport took, which requests the router was asked about, and every
//! host send's report.

use super::host_request::HostRequestReport;
use super::host_send::HostSendReport;
use crate::input::world::World;
use crate::run::turns::ExecutedTurn;
use serde_json::{json, Value};
use sharedos_envelope::events::EventKind;
use sharedos_model::instant::Instant;
use sharedos_world::options::messaging::EffectsExpectation;
use sharedos_world::transport::Dispatch;
use std::collections::BTreeSet;

/// The prefix of a host send's envelope id (turn requests never mint it).
pub const HOST_MESSAGE_PREFIX: &str = "host-";

/// One dispatch as the snapshot shows it.
fn dispatch_value(dispatch: &Dispatch, checked: Option<&Result<(), String>>) -> Value {
    let envelope = &dispatch.envelope;
    let receipt = dispatch.receipt.as_ref().and_then(|r| r.get("status")).cloned().unwrap_or(json!("threw"));
    let mut value = json!({
        "id": envelope.id,
        "sender": envelope.sender,
        "receiver": envelope.receiver,
        "purpose": envelope.purpose,
        "traceId": envelope.trace_id,
        "createdAt": envelope.created_at,
        "payload": envelope.payload,
        "receipt": receipt,
    });
    if let (Some(map), Some(checked)) = (value.as_object_mut(), checked) {
        map.insert("fromTurnContext".into(), json!(checked.is_ok()));
    }
    value
}

/// Every call id any turn of the cell issued.
fn call_ids(turns: &[ExecutedTurn]) -> BTreeSet<String> {
    turns
        .iter()
        .flat_map(|t| t.result.events.iter())
        .filter(|e| e.kind == EventKind::ToolRequested.as_str())
        .filter_map(|e| e.data.get("callId").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Whether an envelope a turn's request handed over carries that turn's
/// trusted fields under a minted id (M18); `None` for a host send's envelope.
fn trusted_fields(dispatch: &Dispatch, turns: &[ExecutedTurn], calls: &BTreeSet<String>) -> Option<Result<(), String>> {
    let envelope = &dispatch.envelope;
    if envelope.id.starts_with(HOST_MESSAGE_PREFIX) {
        return None;
    }
    let Some(turn) = turns.iter().find(|t| t.request.context.trace_id == envelope.trace_id) else {
        return Some(Err(format!("envelope `{}` names a trace no turn ran", envelope.id)));
    };
    Some(check_against(envelope, turn, calls))
}

/// Whether `at` lies within the turn: from its `now` to its end. On
/// virtual time nothing passes before a call, so that is exactly the
/// turn's `now`; a real clock moves between the turn's start and the call.
fn within_the_turn(at: &str, turn: &ExecutedTurn) -> bool {
    match (Instant::parse(at), Instant::parse(&turn.request.context.now), Instant::parse(&turn.result.completed_at)) {
        (Some(at), Some(start), Some(end)) => start <= at && at <= end,
        _ => false,
    }
}

fn check_against(
    envelope: &sharedos_model::message::MessageEnvelope,
    turn: &ExecutedTurn,
    calls: &BTreeSet<String>,
) -> Result<(), String> {
    let context = &turn.request.context;
    let mut wrong = Vec::new();
    if envelope.sender != context.actor {
        wrong.push("sender");
    }
    if envelope.purpose != context.purpose {
        wrong.push("purpose");
    }
    if !within_the_turn(&envelope.created_at, turn) {
        wrong.push("createdAt");
    }
    if calls.contains(&envelope.id) {
        wrong.push("id (a call id)");
    }
    if envelope.reply_to.is_some() || envelope.provenance.is_some() {
        wrong.push("replyTo or provenance (set by no one)");
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("envelope `{}` does not carry the turn's {}", envelope.id, wrong.join(", ")))
    }
}

/// The `world.messaging` part of a cell's snapshot.
#[must_use]
pub fn messaging_effects(
    world: &World,
    turns: &[ExecutedTurn],
    host: &[HostSendReport],
    requests: &[HostRequestReport],
) -> Value {
    let dispatches = world.fixtures.transport.dispatches();
    let calls = call_ids(turns);
    let envelopes: Vec<Value> =
        dispatches.iter().map(|d| dispatch_value(d, trusted_fields(d, turns, &calls).as_ref())).collect();
    json!({
        "dispatches": dispatches.len(),
        "accepted": world.fixtures.transport.accepted().len(),
        "envelopes": envelopes,
        "repliesAskedFor": world.fixtures.router.asked(),
        "replies": world.fixtures.router.answered(),
        "host": host,
        "hostRequests": requests,
    })
}

/// Every way the cell's port effects fall short of `expect`, in words.
#[must_use]
pub fn effect_misses(expect: &EffectsExpectation, world: &World, turns: &[ExecutedTurn]) -> Vec<String> {
    let dispatches = world.fixtures.transport.dispatches();
    let mut misses = Vec::new();
    if let Some(n) = expect.dispatches {
        if usize::try_from(n).ok() != Some(dispatches.len()) {
            misses.push(format!("the transport was called {} time(s), not {n}", dispatches.len()));
        }
    }
    if expect.trusted_fields {
        let calls = call_ids(turns);
        let from_turns: Vec<Result<(), String>> =
            dispatches.iter().filter_map(|d| trusted_fields(d, turns, &calls)).collect();
        if from_turns.is_empty() {
            misses.push("no turn's request reached the transport".to_string());
        }
        misses.extend(from_turns.into_iter().filter_map(Result::err));
    }
    misses
}
