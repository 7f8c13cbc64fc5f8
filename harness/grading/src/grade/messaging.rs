//! A messaging world's host operations and port effects graded from what
//! the run observed (`run::messaging::MessagingObservation`): each host
//! send, each host request, and the effects expectation is one more attempt
//! of the row, handed to the judge ahead of the script's, so the judge
//! decides the verdict over all of them at once.

pub mod host;
pub mod ports;

use crate::grade::judge::attempt::{AttemptGrade, AttemptOutcome};
use crate::input::script::Expectation;
use crate::messaging::MessagingObservation;
use host::{as_tool_status, grade_host_request, grade_host_send, HostRequestReport, HostSendReport};
use sharedos_model::audit::Source;
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use sharedos_world::options::messaging::{HostRequest, HostSend, MessagingOptions};

/// The graded attempt id of the effects expectation.
pub const EFFECTS_ATTEMPT_ID: &str = "world.messaging";
/// The prefix that tells a host operation's graded attempt from a script's.
pub const HOST_ATTEMPT_PREFIX: &str = "host.";

/// A messaging cell's host operations and effects, graded.
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct MessagingGrade {
    /// Each observed host send, graded, in the order made.
    pub sends: Vec<HostSendReport>,
    /// Each observed host request, graded, in the order made.
    pub requests: Vec<HostRequestReport>,
    /// The attempts the row gains, in grading order: host sends, then host
    /// requests, then the effects expectation.
    pub attempts: Vec<AttemptOutcome>,
}

/// Grades what the run observed against the row's messaging option. A
/// declared operation the observation lacks (a bundle edited to drop it)
/// is a failed attempt, never a silently shorter row.
pub fn grade_messaging(options: &MessagingOptions, observed: &MessagingObservation) -> MessagingGrade {
    let mut grade = MessagingGrade::default();
    for send in &options.host {
        match observed.host_sends.iter().find(|o| o.id == send.id) {
            Some(observation) => {
                let report = grade_host_send(send, observation);
                grade.attempts.push(host_send_attempt(&report, send));
                grade.sends.push(report);
            }
            None => grade.attempts.push(unobserved(&send.id, send.role)),
        }
    }
    for request in &options.host_requests {
        match observed.host_requests.iter().find(|o| o.id == request.id) {
            Some(observation) => {
                let report = grade_host_request(request, observation);
                grade.attempts.push(host_request_attempt(&report, request));
                grade.requests.push(report);
            }
            None => grade.attempts.push(unobserved(&request.id, request.role)),
        }
    }
    grade.attempts.extend(effects_outcome(options, observed));
    grade
}

/// The effects expectation graded as a probe: "succeeded" when the ports
/// show what the row requires, "failed" with the misses otherwise.
fn effects_outcome(options: &MessagingOptions, observed: &MessagingObservation) -> Option<AttemptOutcome> {
    let expect = options.expect_effects.as_ref()?;
    let misses = ports::effect_misses(expect, &observed.ports);
    let met = misses.is_empty();
    let observed = if met { ToolStatus::Succeeded } else { ToolStatus::Failed };
    Some(AttemptOutcome {
        detail: (!met).then(|| misses.join("; ")),
        ..attempt(EFFECTS_ATTEMPT_ID.to_string(), Role::Probe, met, Some(observed))
    })
}

/// A host send graded as one attempt of the row, so a missed host
/// expectation fails the cell exactly as a missed tool expectation does.
fn host_send_attempt(report: &HostSendReport, send: &HostSend) -> AttemptOutcome {
    let mut statuses: Vec<ToolStatus> = Vec::new();
    for status in send.expect.outcomes.iter().map(|o| as_tool_status(*o)) {
        if !statuses.contains(&status) {
            statuses.push(status);
        }
    }
    let observed = as_tool_status(report.outcome);
    AttemptOutcome {
        reason_code: report.reason_code.clone(),
        refused_by: (observed != ToolStatus::Succeeded).then_some(Source::Kernel),
        expect: Expectation::new(statuses, send.expect.reason_codes.clone()),
        detail: report.detail.clone(),
        ..attempt(format!("{HOST_ATTEMPT_PREFIX}{}", report.id), send.role, report.met, Some(observed))
    }
}

/// A host request graded as one attempt of the row.
fn host_request_attempt(report: &HostRequestReport, request: &HostRequest) -> AttemptOutcome {
    AttemptOutcome {
        reason_code: report.reason_code.clone(),
        refused_by: report.status.filter(|s| *s != ToolStatus::Succeeded).map(|_| Source::Kernel),
        expect: Expectation::new(request.expect.statuses.clone(), request.expect.reason_codes.clone()),
        detail: report.detail.clone(),
        ..attempt(format!("{HOST_ATTEMPT_PREFIX}{}", report.id), request.role, report.met, report.status)
    }
}

/// A declared host operation with no observation: failed, never issued.
fn unobserved(id: &str, role: Role) -> AttemptOutcome {
    AttemptOutcome {
        attempted: false,
        detail: Some("the evidence holds no observation of it".to_string()),
        ..attempt(format!("{HOST_ATTEMPT_PREFIX}{id}"), role, false, None)
    }
}

/// An issued attempt graded pass or fail, with nothing else said.
fn attempt(attempt_id: String, role: Role, met: bool, observed: Option<ToolStatus>) -> AttemptOutcome {
    AttemptOutcome {
        attempt_id,
        role,
        grade: if met { AttemptGrade::Pass } else { AttemptGrade::Fail },
        attempted: true,
        observed,
        reason_code: None,
        cause: None,
        refused_by: None,
        expect: Expectation::new(vec![ToolStatus::Succeeded], None),
        detail: None,
        acted_outside: false,
    }
}
