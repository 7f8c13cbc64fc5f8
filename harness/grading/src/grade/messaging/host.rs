//! Host sends and host requests graded against what the row expects of
//! them (M1, M4, M5, M27): each observation becomes a report saying whether
//! it met its expectation, and why not.

use crate::input::script::Expectation;
use crate::messaging::host_request::HostRequestObservation;
use crate::messaging::host_send::HostSendObservation;
use serde::Serialize;
use serde_json::Value;
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use sharedos_world::options::messaging::{HostExpectation, HostOutcome, HostRequest, HostSend};

/// One host send, graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// The refusal code (the synthetic one for a type error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// Transport calls it made.
    pub dispatches: u32,
    /// Audit records it wrote.
    pub audit_events: u32,
    /// Whether it met its expectation.
    pub met: bool,
    /// Why it did not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One host request, graded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostRequestReport {
    /// The request's id.
    pub id: String,
    /// The call id it was made under.
    pub call_id: String,
    /// The tool result's status (absent when the kernel threw).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ToolStatus>,
    /// The refusal code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// The output of a success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The payload of the reply the router handed back for this call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_payload: Option<Value>,
    /// Whether it met its expectation.
    pub met: bool,
    /// Why it did not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What the kernel threw, in words, when it threw.
fn thrown(threw: Option<&String>) -> Option<String> {
    threw.map(|what| format!("the kernel threw: {what}"))
}

/// `observed` graded against `send`'s expectation.
#[must_use]
pub fn grade_host_send(send: &HostSend, observed: &HostSendObservation) -> HostSendReport {
    let mut report = HostSendReport {
        id: observed.id.clone(),
        role: send.role,
        message_id: observed.message_id.clone(),
        outcome: observed.outcome,
        reason_code: observed.reason_code.clone(),
        dispatches: observed.dispatches,
        audit_events: observed.audit_events,
        met: false,
        detail: thrown(observed.threw.as_ref()),
    };
    let misses = send_misses(&send.expect, &report);
    report.met = misses.is_empty() && report.detail.is_none();
    if !misses.is_empty() {
        report.detail = Some(misses.join("; "));
    }
    report
}

/// Every way `report` falls short of `expect`, in words.
fn send_misses(expect: &HostExpectation, report: &HostSendReport) -> Vec<String> {
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

/// `observed` graded against `request`'s expectation.
#[must_use]
pub fn grade_host_request(request: &HostRequest, observed: &HostRequestObservation) -> HostRequestReport {
    let mut report = HostRequestReport {
        id: observed.id.clone(),
        call_id: observed.call_id.clone(),
        status: observed.status,
        reason_code: observed.reason_code.clone(),
        output: observed.output.clone(),
        reply_payload: observed.reply_payload.clone(),
        met: false,
        detail: thrown(observed.threw.as_ref()),
    };
    let misses = request_misses(request, &report);
    report.met = misses.is_empty() && report.detail.is_none();
    if !misses.is_empty() {
        report.detail = Some(misses.join("; "));
    }
    report
}

fn request_misses(request: &HostRequest, report: &HostRequestReport) -> Vec<String> {
    let expect = &request.expect;
    let mut misses = Vec::new();
    let Some(status) = report.status else { return misses };
    let expectation = Expectation::new(expect.statuses.clone(), expect.reason_codes.clone());
    if !expectation.accepts(status, report.reason_code.as_deref()) {
        misses.push(format!(
            "it was answered `{}` ({})",
            status.as_str(),
            report.reason_code.as_deref().unwrap_or("no code")
        ));
    }
    if expect.output_is_reply_payload {
        match (&report.output, &report.reply_payload) {
            (Some(output), Some(payload)) if output == payload => {}
            (_, None) => misses.push("the router handed back no reply with a payload".to_string()),
            _ => misses.push("its output is not exactly the reply's payload".to_string()),
        }
    }
    misses
}

/// The status a host outcome is graded as among tool answers.
#[must_use]
pub fn as_tool_status(outcome: HostOutcome) -> ToolStatus {
    match outcome {
        HostOutcome::Accepted | HostOutcome::Delivered => ToolStatus::Succeeded,
        HostOutcome::Denied => ToolStatus::Denied,
        HostOutcome::Failed | HostOutcome::Thrown => ToolStatus::Failed,
    }
}
