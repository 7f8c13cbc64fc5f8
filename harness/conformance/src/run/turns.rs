//! Running one cell's turns, in order, against one world on a paused clock.

use super::request::{execution_id, turn_request};
use crate::adversary::Adversary;
use crate::golden::CellKey;
use crate::receipt::{read_adversarial_report, AdversarialTurnReport};
use crate::script::AttackScript;
use crate::world::World;
use crate::world_options::WorldOptions;
use sharedos_envelope::executor::Executor;
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions, SequentialIds};
use sharedos_model::execution::{ExecutionRequest, ExecutionResult};
use std::rc::Rc;

/// One executed turn and what the runtime reported about it.
#[derive(Debug, Clone)]
pub struct ExecutedTurn {
    /// 1-based turn number.
    pub turn: u32,
    /// What the envelope was asked.
    pub request: ExecutionRequest,
    /// What it returned.
    pub result: ExecutionResult,
    /// The runtime's own report, when it gave one.
    pub report: Option<AdversarialTurnReport>,
}

/// A turn that could not be executed at all (a harness bug, never a verdict).
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The executor refused its construction.
    #[error("construct the executor for {execution_id}: {detail}")]
    Construction {
        /// The turn.
        execution_id: String,
        /// Why.
        detail: String,
    },
    /// The executor refused the request it was handed.
    #[error("execute {execution_id}: {detail}")]
    Execution {
        /// The turn.
        execution_id: String,
        /// Why.
        detail: String,
    },
}

/// Runs every turn of `script` for one cell with the scripted adversary seated.
///
/// # Errors
/// When the executor cannot be built or refuses a request.
pub async fn run_adversary_turns(
    world: &World,
    options: &WorldOptions,
    script: &Rc<AttackScript>,
    cell: &CellKey,
) -> Result<Vec<ExecutedTurn>, TurnError> {
    let mut turns = Vec::new();
    for turn in 1..=script.turn_count() {
        let id = execution_id(&cell.case, &cell.condition, &cell.column, turn);
        let clock = world.fixtures.clock.clone();
        let executor_options = ExecutorOptions {
            clock: Rc::new(move || clock.now()),
            create_id: Rc::new(SequentialIds::new(&format!("{id}.event"))),
            drain_grace_ms: options.drain_grace_ms.unwrap_or(0),
            ..ExecutorOptions::default()
        };
        let runtime = Rc::new(Adversary::new(Rc::clone(script), turn));
        let executor = Executor::new(world.kernel.clone(), runtime, executor_options)
            .map_err(|e| TurnError::Construction { execution_id: id.clone(), detail: e.to_string() })?;
        let request = turn_request(world, options, &id, turn);
        let result = executor
            .execute(request.clone(), ExecuteOptions::default())
            .await
            .map_err(|e| TurnError::Execution { execution_id: id.clone(), detail: e.to_string() })?;
        let report = read_adversarial_report(&result);
        turns.push(ExecutedTurn { turn, request, result, report });
    }
    Ok(turns)
}
