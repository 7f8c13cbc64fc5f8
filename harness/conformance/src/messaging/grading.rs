//! Folding a messaging world's host sends and port effects into a cell's
//! grading: each host send, and the effects expectation, is one more graded
//! attempt of the row, ahead of the script's, and the verdict is decided
//! again over all of them by the judge's own status rules.

use super::effects::effect_misses;
use super::tool_expectation;
use super::{host, host_request, MessagingRun};
use crate::judge::attempt::{AttemptGrade, AttemptOutcome};
use crate::judge::{status, Judgement};
use crate::record::Completeness;
use crate::run::turns::ExecutedTurn;
use crate::script::AttackScript;
use crate::world::World;
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

/// What a cell's grading needs besides the judgement.
pub struct Regrading<'a> {
    /// The row's script (its kind decides the status rules).
    pub script: &'a AttackScript,
    /// The last turn's record completeness.
    pub completeness: &'a Completeness,
    /// The world the cell ran in.
    pub world: &'a World,
    /// The cell's turns.
    pub turns: &'a [ExecutedTurn],
}

/// `judgement` with the host operations and the effects expectation graded
/// in (host sends, then host requests, then effects, then the script's
/// attempts), and its verdict decided again; unchanged when none is declared.
pub fn regrade(
    judgement: Judgement,
    options: &MessagingOptions,
    run: &MessagingRun,
    with: &Regrading<'_>,
) -> Judgement {
    let mut extra: Vec<AttemptOutcome> =
        options.host.iter().zip(run.reports()).map(|(send, report)| host::graded(send, report)).collect();
    extra.extend(
        options.host_requests.iter().zip(run.requests()).map(|(request, report)| host_request::graded(request, report)),
    );
    extra.extend(effects_outcome(options, with.world, with.turns));
    if extra.is_empty() {
        return judgement;
    }
    extra.extend(judgement.attempts);
    let finding = match &judgement.turn {
        Some(turn) => status::with_turn(&extra, turn),
        None => status::attempts_only(with.script.kind, &extra, with.completeness),
    };
    Judgement { status: status::status_of(finding.as_ref()), finding, attempts: extra, ..judgement }
}
