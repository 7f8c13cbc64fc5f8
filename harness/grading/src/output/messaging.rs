//! The `world.messaging` part of a cell's snapshot: every envelope handed
//! to the transport (its trusted fields, the minted id, the receipt, and
//! whether a turn's envelope carried that turn's context), how many calls
//! the transport took, which requests the router was asked about, and
//! every host operation as graded.

use crate::grade::messaging::ports::trusted_fields;
use crate::grade::messaging::MessagingGrade;
use crate::messaging::ports::{DispatchObservation, PortObservation};
use crate::messaging::MessagingObservation;
use serde_json::{json, Value};

/// The snapshot's messaging effects, from what the run observed and how it
/// was graded.
#[must_use]
pub fn messaging_effects(observed: &MessagingObservation, graded: &MessagingGrade) -> Value {
    let ports = &observed.ports;
    let envelopes: Vec<Value> = ports.dispatches.iter().map(|d| dispatch_value(d, ports)).collect();
    json!({
        "dispatches": ports.dispatches.len(),
        "accepted": ports.accepted,
        "envelopes": envelopes,
        "repliesAskedFor": ports.replies_asked_for,
        "replies": ports.replies,
        "host": graded.sends,
        "hostRequests": graded.requests,
    })
}

/// One dispatch as the snapshot shows it.
fn dispatch_value(dispatch: &DispatchObservation, ports: &PortObservation) -> Value {
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
    if let (Some(map), Some(checked)) = (value.as_object_mut(), trusted_fields(dispatch, ports)) {
        map.insert("fromTurnContext".into(), json!(checked.is_ok()));
    }
    value
}
