//! Host sends: `sendMessage` calls the host makes before the first turn,
//! under the world's context, each observed by what it returned, how many
//! transport calls it made and how many audit records it wrote (M1, M4, M5).

use crate::input::world::World;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sharedos_model::message::{MessageDeliveryResult, PROTOCOL_VERSION};
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{agent, turn_trace_id, PURPOSE};
use sharedos_world::messaging::acting_context;
use sharedos_world::options::messaging::{HostOutcome, HostSend, MessagingOptions};

/// The code a host send is observed with when the kernel threw a type
/// error instead of answering (SharedOS has no code for it: the call
/// simply throws).
pub const THROWN_TYPE_ERROR: &str = "thrown_type_error";
/// The prefix of a host send's envelope id (turn requests never mint it).
pub const HOST_MESSAGE_PREFIX: &str = "host-";

/// What one host send did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostSendObservation {
    /// The send's id.
    pub id: String,
    /// The envelope id it carried.
    pub message_id: String,
    /// What it ended as.
    pub outcome: HostOutcome,
    /// The refusal code (the synthetic one for a type error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// Transport calls it made.
    pub dispatches: u32,
    /// Audit records it wrote.
    pub audit_events: u32,
    /// What the kernel threw, when it threw anything but a type error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threw: Option<String>,
}

/// The envelope a host send hands the kernel, as untrusted JSON: unset
/// fields take the context's values, `extra` adds keys no envelope defines.
#[must_use]
pub fn host_envelope(send: &HostSend, trace_id: &str, now: &str) -> Value {
    let mut envelope = Map::new();
    envelope.insert("version".into(), json!(PROTOCOL_VERSION));
    envelope.insert("id".into(), json!(format!("{HOST_MESSAGE_PREFIX}{}", send.id)));
    envelope.insert("sender".into(), json!(send.sender.clone().unwrap_or_else(agent)));
    envelope.insert("receiver".into(), json!(send.receiver));
    envelope.insert("purpose".into(), json!(send.purpose.as_deref().unwrap_or(PURPOSE)));
    envelope.insert("payload".into(), json!({ "question": "status" }));
    envelope.insert("traceId".into(), json!(send.trace_id.as_deref().unwrap_or(trace_id)));
    envelope.insert("createdAt".into(), json!(now));
    for (key, value) in &send.extra {
        envelope.insert(key.clone(), json!(value));
    }
    Value::Object(envelope)
}

/// Makes every host send of `options`, in order, before the first turn.
pub async fn run_host_sends(world: &World, options: &MessagingOptions) -> Vec<HostSendObservation> {
    let mut observed = Vec::with_capacity(options.host.len());
    for send in &options.host {
        observed.push(run_host_send(world, send).await);
    }
    observed
}

async fn run_host_send(world: &World, send: &HostSend) -> HostSendObservation {
    let now = world.fixtures.clock.now();
    let trace_id = turn_trace_id(1);
    let context = acting_context(&now, &trace_id, &agent());
    let envelope = host_envelope(send, &trace_id, &now);
    let (audit_before, dispatches_before) =
        (world.fixtures.audit.counts().0, world.fixtures.transport.dispatches().len());
    let answer = world.kernel.send_message(&context, &envelope, &AbortSignal::new()).await;
    let (outcome, reason_code, threw) = match answer {
        Ok(result) => (outcome_of(&result), result.error().map(|e| e.code.clone()), None),
        Err(KernelError::InvalidInput(_)) => (HostOutcome::Thrown, Some(THROWN_TYPE_ERROR.to_string()), None),
        Err(other) => (HostOutcome::Thrown, None, Some(other.to_string())),
    };
    let count = |after: usize, before: usize| u32::try_from(after.saturating_sub(before)).unwrap_or(u32::MAX);
    HostSendObservation {
        id: send.id.clone(),
        message_id: format!("{HOST_MESSAGE_PREFIX}{}", send.id),
        outcome,
        reason_code,
        dispatches: count(world.fixtures.transport.dispatches().len(), dispatches_before),
        audit_events: count(world.fixtures.audit.counts().0, audit_before),
        threw,
    }
}

fn outcome_of(result: &MessageDeliveryResult) -> HostOutcome {
    match result {
        MessageDeliveryResult::Accepted { .. } => HostOutcome::Accepted,
        MessageDeliveryResult::Delivered { .. } => HostOutcome::Delivered,
        MessageDeliveryResult::Denied { .. } => HostOutcome::Denied,
        MessageDeliveryResult::Failed { .. } => HostOutcome::Failed,
    }
}
