//! Host sends: `sendMessage` calls the host makes before the first turn,
//! under the world's context, each measured by what it returned, how many
//! transport calls it made and how many audit records it wrote (M1, M4, M5).

use crate::input::world::World;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sharedos_model::message::{MessageDeliveryResult, PROTOCOL_VERSION};
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortSignal;
use sharedos_world::constants::{agent, turn_trace_id, PURPOSE};
use sharedos_world::messaging::acting_context;
use sharedos_world::options::messaging::{HostExpectation, HostOutcome, HostSend, MessagingOptions};

/// The code a host send is graded with when the kernel threw instead of
/// answering (SharedOS has no code for it: the call simply throws).
pub const THROWN_TYPE_ERROR: &str = "thrown_type_error";
/// The prefix that tells a host send's graded attempt from a script's.
pub const HOST_ATTEMPT_PREFIX: &str = "host.";

/// What one host send did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostSendReport {
    /// The send's id.
    pub id: String,
    /// Its role.
    pub role: Role,
    /// The envelope id it carried.
    pub message_id: String,
    /// What it ended as.
    pub outcome: HostOutcome,
    /// The refusal code (the synthetic one for a throw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// Transport calls it made.
    pub dispatches: u32,
    /// Audit records it wrote.
    pub audit_events: u32,
    /// Whether it met its expectation.
    pub met: bool,
    /// Why it did not, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The envelope a host send hands the kernel, as untrusted JSON: unset
/// fields take the context's values, `extra` adds keys no envelope defines.
#[must_use]
pub fn host_envelope(send: &HostSend, trace_id: &str, now: &str) -> Value {
    let mut envelope = Map::new();
    envelope.insert("version".into(), json!(PROTOCOL_VERSION));
    envelope.insert("id".into(), json!(format!("host-{}", send.id)));
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
pub async fn run_host_sends(world: &World, options: Option<&MessagingOptions>) -> Vec<HostSendReport> {
    let Some(options) = options else { return Vec::new() };
    let mut reports = Vec::new();
    for send in &options.host {
        reports.push(run_host_send(world, send).await);
    }
    reports
}

async fn run_host_send(world: &World, send: &HostSend) -> HostSendReport {
    let now = world.fixtures.clock.now();
    let trace_id = turn_trace_id(1);
    let context = acting_context(&now, &trace_id, &agent());
    let envelope = host_envelope(send, &trace_id, &now);
    let message_id = format!("host-{}", send.id);
    let (audit_before, dispatches_before) =
        (world.fixtures.audit.counts().0, world.fixtures.transport.dispatches().len());
    let answer = world.kernel.send_message(&context, &envelope, &AbortSignal::new()).await;
    let (outcome, reason_code, error) = match answer {
        Ok(result) => (outcome_of(&result), result.error().map(|e| e.code.clone()), None),
        Err(KernelError::InvalidInput(_)) => (HostOutcome::Thrown, Some(THROWN_TYPE_ERROR.to_string()), None),
        Err(other) => (HostOutcome::Thrown, None, Some(format!("the kernel threw: {other}"))),
    };
    let count = |after: usize, before: usize| u32::try_from(after.saturating_sub(before)).unwrap_or(u32::MAX);
    let mut report = HostSendReport {
        id: send.id.clone(),
        role: send.role,
        message_id,
        outcome,
        reason_code,
        dispatches: count(world.fixtures.transport.dispatches().len(), dispatches_before),
        audit_events: count(world.fixtures.audit.counts().0, audit_before),
        met: false,
        detail: error,
    };
    let misses = misses(&send.expect, &report);
    report.met = misses.is_empty() && report.detail.is_none();
    if !misses.is_empty() {
        report.detail = Some(misses.join("; "));
    }
    report
}

fn outcome_of(result: &MessageDeliveryResult) -> HostOutcome {
    match result {
        MessageDeliveryResult::Accepted { .. } => HostOutcome::Accepted,
        MessageDeliveryResult::Delivered { .. } => HostOutcome::Delivered,
        MessageDeliveryResult::Denied { .. } => HostOutcome::Denied,
        MessageDeliveryResult::Failed { .. } => HostOutcome::Failed,
    }
}

/// Every way `report` falls short of `expect`, in words.
#[must_use]
pub fn misses(expect: &HostExpectation, report: &HostSendReport) -> Vec<String> {
    let mut misses = Vec::new();
    if !expect.outcomes.contains(&report.outcome) {
        misses.push(format!("it ended `{}`", report.outcome.as_str()));
    } else if let (Some(codes), false) = (&expect.reason_codes, report.outcome.is_accepted()) {
        if !report.reason_code.as_ref().is_some_and(|c| codes.contains(c)) {
            misses.push(format!("it was refused with `{}`", report.reason_code.as_deref().unwrap_or("no code")));
        }
    }
    if let Some(n) = expect.dispatches.filter(|n| *n != report.dispatches) {
        misses.push(format!("it made {} transport call(s), not {n}", report.dispatches));
    }
    if let Some(n) = expect.audit_events.filter(|n| *n != report.audit_events) {
        misses.push(format!("it wrote {} audit record(s), not {n}", report.audit_events));
    }
    misses
}

/// The status a host outcome is reported as among tool answers.
#[must_use]
pub fn as_tool_status(outcome: HostOutcome) -> ToolStatus {
    match outcome {
        HostOutcome::Accepted | HostOutcome::Delivered => ToolStatus::Succeeded,
        HostOutcome::Denied => ToolStatus::Denied,
        HostOutcome::Failed | HostOutcome::Thrown => ToolStatus::Failed,
    }
}
