//! Running and grading one cell: a fresh world, every turn on a paused
//! clock, a record per turn, the judge over the last record.

use super::hashes::{evaluator_hash, policy_hash, record_hash, spec_hash, world_hash};
use super::snapshot::cell_snapshot;
use super::turns::{run_adversary_turns, ExecutedTurn, TurnError};
use crate::case::{Case, Condition};
use crate::golden::CellKey;
use crate::judge::attempt::GradingLimits;
use crate::judge::cell::assemble_cell;
use crate::judge::{judge, GradingInput};
use crate::manifest::{Cell, CellEvidence, TurnEvidence};
use crate::receipt::AttemptReceipt;
use crate::record::assemble::{assemble_record, AssemblyInput, CostInput, SystemInput};
use crate::record::completeness::check_completeness;
use crate::script::AttackScript;
use crate::world::{World, WorldError};
use serde_json::Value;
use sharedos_model::audit::AuditEvent;
use sharedos_model::canonical::CanonicalError;
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::record::{ExecutionRecord, ExperimentIdentity};
use std::rc::Rc;

/// The version of the kernel and envelope under test, as records name it.
pub const REFERENCE_VERSION: &str = concat!("sharedos-conformance-reference/", env!("CARGO_PKG_VERSION"));

/// One graded cell with everything written about it.
#[derive(Debug, Clone)]
pub struct CellRun {
    /// Which cell.
    pub key: CellKey,
    /// The graded cell, as the manifest holds it.
    pub cell: Cell,
    /// Record hashes and prompt hashes, per turn.
    pub evidence: CellEvidence,
    /// The golden snapshot value.
    pub snapshot: Value,
}

/// A cell that could not be run (a harness bug, never a verdict).
#[derive(Debug, thiserror::Error)]
pub enum CellError {
    /// The world could not be built.
    #[error(transparent)]
    World(#[from] WorldError),
    /// A turn could not be executed.
    #[error(transparent)]
    Turn(#[from] TurnError),
    /// A record could not be assembled.
    #[error("assemble the record of {execution_id}: {detail}")]
    Record {
        /// The turn.
        execution_id: String,
        /// Why.
        detail: String,
    },
    /// A hash could not be computed.
    #[error(transparent)]
    Hash(#[from] CanonicalError),
    /// The plan names a case, condition or script the suite lacks.
    #[error("find cell {cell} in the suite")]
    NotInSuite {
        /// `case/condition/column`.
        cell: String,
    },
    /// The per-cell async runtime could not start.
    #[error("start the cell's runtime: {0}")]
    Runtime(String),
}

/// Runs one cell of the adversary column on its own current-thread runtime
/// with a paused clock.
///
/// # Errors
/// When the cell cannot be run at all.
pub fn run_cell(
    case: &Case,
    condition: &Condition,
    script: &Rc<AttackScript>,
    column_id: &str,
) -> Result<CellRun, CellError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .map_err(|e| CellError::Runtime(e.to_string()))?;
    runtime.block_on(run_cell_async(case, condition, script, column_id))
}

async fn run_cell_async(
    case: &Case,
    condition: &Condition,
    script: &Rc<AttackScript>,
    column_id: &str,
) -> Result<CellRun, CellError> {
    let world = World::build(&condition.world)?;
    let identity = Identity::new(case, script, condition, &world)?;
    let key = CellKey { case: case.id.clone(), condition: condition.id.clone(), column: column_id.to_string() };
    let turns = run_adversary_turns(&world, &condition.world, script, &key).await?;
    let audit = world.fixtures.audit.events();
    let records_of = RecordContext { case, condition, column_id, identity, multi_turn: turns.len() > 1 };
    let mut records = Vec::new();
    for turn in &turns {
        let input = assembly_input(turn, &audit, &records_of)?;
        let execution_id = &turn.request.execution_id;
        records.push(
            assemble_record(input)
                .map_err(|e| CellError::Record { execution_id: execution_id.clone(), detail: e.to_string() })?,
        );
    }
    let receipts: Vec<AttemptReceipt> =
        turns.iter().filter_map(|t| t.report.as_ref()).flat_map(|r| r.receipts.clone()).collect();
    let Some(last) = records.last() else {
        return Err(CellError::Record { execution_id: case.id.clone(), detail: "the cell ran no turn".to_string() });
    };
    let completeness = check_completeness(last);
    let limits = GradingLimits::default();
    let judgement = judge(&GradingInput {
        script,
        expect_turn: condition.expect_turn.as_ref(),
        receipts: &receipts,
        record: last,
        completeness: &completeness,
        limits: &limits,
    });
    let turn_count = u32::try_from(turns.len()).unwrap_or(u32::MAX);
    let cell = assemble_cell(column_id, &judgement, &completeness, turn_count, None);
    let evidence = evidence_of(&key, &records)?;
    let snapshot = cell_snapshot(&cell, &turns, &records, &receipts, &world);
    Ok(CellRun { key, cell, evidence, snapshot })
}

/// The identity hashes every record of a cell carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    spec: String,
    world: String,
    evaluator: String,
}

impl Identity {
    /// The hashes of the question a cell asks, its materialised world, and the rules.
    ///
    /// # Errors
    /// When a hash cannot be computed.
    pub fn new(
        case: &Case,
        script: &AttackScript,
        condition: &Condition,
        world: &World,
    ) -> Result<Identity, CellError> {
        Ok(Identity {
            spec: spec_hash(case, script, &condition.id)?,
            world: world_hash(&world.description(&condition.world))?,
            evaluator: evaluator_hash()?,
        })
    }
}

/// What a cell's records are assembled with, besides each turn itself.
#[derive(Debug, Clone)]
pub struct RecordContext<'a> {
    /// The case.
    pub case: &'a Case,
    /// The condition.
    pub condition: &'a Condition,
    /// The column.
    pub column_id: &'a str,
    /// The cell's identity hashes.
    pub identity: Identity,
    /// Whether the script runs more than one turn (run ids then carry the turn).
    pub multi_turn: bool,
}

/// Everything one turn's record is assembled from.
///
/// # Errors
/// When the policy hash cannot be computed.
pub fn assembly_input<'a>(
    turn: &'a ExecutedTurn,
    audit: &'a [AuditEvent],
    cx: &RecordContext<'_>,
) -> Result<AssemblyInput<'a>, CellError> {
    let (condition_id, column_id) = (&cx.condition.id, cx.column_id);
    let run_id = if cx.multi_turn {
        format!("{condition_id}.{column_id}.{}", turn.turn)
    } else {
        format!("{condition_id}.{column_id}")
    };
    Ok(AssemblyInput {
        request: &turn.request,
        result: &turn.result,
        audit,
        experiment: ExperimentIdentity {
            experiment_id: "sharedos-conformance".to_string(),
            task_id: cx.case.id.clone(),
            run_id,
            spec_hash: cx.identity.spec.clone(),
            world_hash: cx.identity.world.clone(),
            evaluator_hash: cx.identity.evaluator.clone(),
            seed: None,
            metadata: None,
        },
        system: SystemInput {
            protocol_version: PROTOCOL_VERSION.to_string(),
            shared_os_version: REFERENCE_VERSION.to_string(),
            adapter_id: column_id.to_string(),
            policy_hash: policy_hash(&turn.request.context.enabled_tool_namespaces, &turn.request.tools)?,
            ..SystemInput::default()
        },
        runtime: None,
        state: None,
        cost: CostInput::default(),
        audit_ref: None,
        recorded_at: None,
    })
}

fn evidence_of(key: &CellKey, records: &[ExecutionRecord]) -> Result<CellEvidence, CellError> {
    let mut turns = Vec::new();
    for (i, record) in records.iter().enumerate() {
        turns.push(TurnEvidence {
            turn: u32::try_from(i + 1).unwrap_or(u32::MAX),
            record_hash: record_hash(record)?,
            prompt_hash: record.system.prompt_hash.clone(),
        });
    }
    Ok(CellEvidence {
        case_id: key.case.clone(),
        condition_id: key.condition.clone(),
        column_id: key.column.clone(),
        turns,
    })
}
