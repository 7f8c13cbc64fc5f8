//! A messaging world's host operations and port effects as graded attempts:
//! each host send, each host request, and the effects expectation is one
//! more attempt of the row, handed to the judge ahead of the script's, so
//! the judge decides the verdict over all of them at once.

use crate::grade::judge::attempt::{AttemptGrade, AttemptOutcome};
use crate::input::script::Expectation;
use crate::input::world::World;
use crate::run::messaging::effects::effect_misses;
use crate::run::messaging::host_request::HostRequestReport;
use crate::run::messaging::host_send::{self, HostSendReport, HOST_ATTEMPT_PREFIX};
use crate::run::messaging::MessagingRun;
use crate::run::turns::ExecutedTurn;
use sharedos_model::audit::Source;
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use sharedos_world::options::messaging::{HostRequest, HostSend, MessagingOptions};

/// The graded attempt id of the effects expectation.
pub const EFFECTS_ATTEMPT_ID: &str = "world.messaging";

/// The effects expectation graded as a probe: "succeeded" when the ports
/// show what the row requires, "failed" with the misses otherwise.
fn effects_outcome(options: &MessagingOptions, world: &World, turns: &[ExecutedTurn]) -> Option<AttemptOutcome> {
    let expect = options.expect_effects.as_ref()?;
    let misses = effect_misses(expect, world, turns);
    let met = misses.is_empty();
    Some(AttemptOutcome {
        attempt_id: EFFECTS_ATTEMPT_ID.to_string(),
        role: Role::Probe,
        grade: if met { AttemptGrade::Pass } else { AttemptGrade::Fail },
        attempted: true,
        observed: Some(if met { ToolStatus::Succeeded } else { ToolStatus::Failed }),
        reason_code: None,
        cause: None,
        refused_by: None,
        expect: Expectation::new(vec![ToolStatus::Succeeded], None),
        detail: (!met).then(|| misses.join("; ")),
        acted_outside: false,
    })
}

/// The attempts a messaging world adds to its row, in grading order: host
/// sends, then host requests, then the effects expectation; none without
/// the option.
#[must_use]
pub fn host_attempts(run: &MessagingRun, world: &World, turns: &[ExecutedTurn]) -> Vec<AttemptOutcome> {
    let Some(options) = run.options() else { return Vec::new() };
    let mut attempts: Vec<AttemptOutcome> =
        options.host.iter().zip(run.reports()).map(|(send, report)| host_send_graded(send, report)).collect();
    attempts.extend(
        options.host_requests.iter().zip(run.requests()).map(|(request, report)| host_request_graded(request, report)),
    );
    attempts.extend(effects_outcome(options, world, turns));
    attempts
}

/// A host send graded as one attempt of the row, so a missed host
/// expectation fails the cell exactly as a missed tool expectation does.
#[must_use]
fn host_send_graded(send: &HostSend, report: &HostSendReport) -> AttemptOutcome {
    let mut statuses: Vec<ToolStatus> = Vec::new();
    for status in send.expect.outcomes.iter().map(|o| host_send::as_tool_status(*o)) {
        if !statuses.contains(&status) {
            statuses.push(status);
        }
    }
    let observed = host_send::as_tool_status(report.outcome);
    AttemptOutcome {
        attempt_id: format!("{HOST_ATTEMPT_PREFIX}{}", send.id),
        role: send.role,
        grade: if report.met { AttemptGrade::Pass } else { AttemptGrade::Fail },
        attempted: true,
        observed: Some(observed),
        reason_code: report.reason_code.clone(),
        cause: None,
        refused_by: (observed != ToolStatus::Succeeded).then_some(Source::Kernel),
        expect: Expectation::new(statuses, send.expect.reason_codes.clone()),
        detail: report.detail.clone(),
        acted_outside: false,
    }
}

/// A host request graded as one attempt of the row.
#[must_use]
fn host_request_graded(request: &HostRequest, report: &HostRequestReport) -> AttemptOutcome {
    AttemptOutcome {
        attempt_id: format!("{HOST_ATTEMPT_PREFIX}{}", request.id),
        role: request.role,
        grade: if report.met { AttemptGrade::Pass } else { AttemptGrade::Fail },
        attempted: true,
        observed: report.status,
        reason_code: report.reason_code.clone(),
        cause: None,
        refused_by: report.status.filter(|s| *s != ToolStatus::Succeeded).map(|_| Source::Kernel),
        expect: Expectation::new(request.expect.statuses.clone(), request.expect.reason_codes.clone()),
        detail: report.detail.clone(),
        acted_outside: false,
    }
}
