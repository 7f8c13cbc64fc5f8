//! A messaging world's host operations and port effects as graded attempts:
//! each host send, each host request, and the effects expectation is one
//! more attempt of the row, handed to the judge ahead of the script's, so
//! the judge decides the verdict over all of them at once.

use crate::grade::judge::attempt::{AttemptGrade, AttemptOutcome};
use crate::run::messaging::effects::effect_misses;
use crate::run::messaging::{host_request, host_send, tool_expectation, MessagingRun};
use crate::run::turns::ExecutedTurn;
use crate::run::world::World;
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use sharedos_world::options::messaging::MessagingOptions;

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
        expect: tool_expectation(vec![ToolStatus::Succeeded], None),
        detail: (!met).then(|| misses.join("; ")),
    })
}

/// The attempts a messaging world adds to its row, in grading order: host
/// sends, then host requests, then the effects expectation; none without
/// the option.
#[must_use]
pub fn host_attempts(run: &MessagingRun, world: &World, turns: &[ExecutedTurn]) -> Vec<AttemptOutcome> {
    let Some(options) = run.options() else { return Vec::new() };
    let mut attempts: Vec<AttemptOutcome> =
        options.host.iter().zip(run.reports()).map(|(send, report)| host_send::graded(send, report)).collect();
    attempts.extend(
        options.host_requests.iter().zip(run.requests()).map(|(request, report)| host_request::graded(request, report)),
    );
    attempts.extend(effects_outcome(options, world, turns));
    attempts
}
