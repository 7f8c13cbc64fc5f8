//! Running and grading one cell: a fresh world, every turn on a paused
//! clock (or a real-clock seat's wall clock), a record per turn, the judge over the last record.

use crate::run::cache::RunCache;
use crate::run::process_seats::WorkerSeats;
use crate::run::quiet::activity_after_result;
use crate::run::turns::{run_turns, TurnError};
use serde_json::{Map, Value};
use sharedos_grading::column::{column, ColumnKind};
use sharedos_grading::grade::evidence::{grade_cell, GradingEvidence, GradingRules};
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::grade::judge::TurnFacts;
use sharedos_grading::grade::receipt::receipts_from_record;
use sharedos_grading::identity::cell_identity::{Identity, WorldIdentity};
use sharedos_grading::identity::world::policy_hash;
use sharedos_grading::input::case::{Case, Condition};
use sharedos_grading::input::script::AttackScript;
use sharedos_grading::input::seat::Seat;
use sharedos_grading::input::world::{World, WorldError};
use sharedos_grading::messaging::MessagingRun;
use sharedos_grading::output::golden::{GoldenComparison, Snapshot};
use sharedos_grading::output::manifest::{evidence_of, CellEvidence};
use sharedos_grading::output::messaging::messaging_effects;
use sharedos_grading::output::snapshot::cell_snapshot;
use sharedos_grading::plan::NotInSuite;
use sharedos_grading::record::assemble::{assemble_record, AssemblyInput, CostInput, SystemInput};
use sharedos_grading::record::receipt::AttemptReceipt;
use sharedos_grading::record::turn::ExecutedTurn;
use sharedos_grading::vocab::CellKey;
use sharedos_model::audit::AuditEvent;
use sharedos_model::canonical::CanonicalError;
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::record::{ExecutionRecord, ExperimentIdentity};
use sharedos_model::tool::ToolDefinition;
use sharedos_process::breach::{Breach, BreachPhase, BREACH_KEY};
use sharedos_process::message::Clock;
use std::cell::OnceCell;
use std::rc::Rc;
use std::sync::Arc;

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
    /// The golden snapshot.
    pub snapshot: Snapshot,
    /// How the snapshot compares with its golden file, when the run was
    /// asked to compare (see `run_all` in the matrix module).
    pub golden: Option<GoldenComparison>,
    /// The hash of the cell's world (`experiment.worldHash`), kept so the
    /// world-set hash need not build the world again.
    pub world_hash: String,
    /// What the cell was graded from, when the run was asked to keep it.
    pub grading: Option<GradingEvidence>,
    /// Why the seat's runtime could not start, when it could not for this
    /// cell's first turn: a run says it once for the column.
    pub start_breach: Option<Breach>,
    /// The later runs of a repeated cell (`--repeat`), in run order; the
    /// fields above are the first run's.
    pub reruns: Vec<Rerun>,
}

impl CellRun {
    /// Every run of the cell, the first first: its verdict, its record
    /// hashes, and what it was graded from when that was kept.
    pub fn runs(&self) -> impl Iterator<Item = (&Cell, &CellEvidence, Option<&GradingEvidence>)> {
        let first = (&self.cell, &self.evidence, self.grading.as_ref());
        std::iter::once(first)
            .chain(self.reruns.iter().map(|again| (&again.cell, &again.evidence, again.grading.as_ref())))
    }
}

/// A later run of a repeated cell: its verdict and its evidence.
#[derive(Debug, Clone)]
pub struct Rerun {
    /// The graded cell.
    pub cell: Cell,
    /// Its record hashes, marked with the run's number.
    pub evidence: CellEvidence,
    /// What it was graded from, when the run was asked to keep it.
    pub grading: Option<GradingEvidence>,
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
        /// The turn's execution id.
        execution_id: String,
        /// Why.
        detail: String,
    },
    /// A hash could not be computed.
    #[error(transparent)]
    Hash(#[from] CanonicalError),
    /// The plan names a case, condition or script the suite lacks.
    #[error(transparent)]
    NotInSuite(#[from] NotInSuite),
    /// The per-cell async runtime could not start.
    #[error("start the cell's runtime: {0}")]
    Runtime(String),
}

/// Runs one cell on its own current-thread runtime with a paused clock.
///
/// # Errors
/// When the cell cannot be run at all.
pub fn run_cell(
    case: &Case,
    condition: &Condition,
    script: &Rc<AttackScript>,
    seats: &[Seat],
    column_id: &str,
) -> Result<CellRun, CellError> {
    Row::new(case, condition, Rc::clone(script), &Arc::default(), &WorkerSeats::new(seats)).run_cell(column_id)
}

/// One row of the matrix (a case under one condition): what its cells share
/// whatever the column, so running several columns computes it once.
#[derive(Debug)]
pub struct Row<'s> {
    case: &'s Case,
    condition: &'s Condition,
    script: Rc<AttackScript>,
    /// What its cells remember, shared with every row of the run.
    cache: &'s Arc<RunCache>,
    /// The worker's process seats.
    seats: &'s WorkerSeats,
    /// The identity hashes, written by the first cell that runs: they cover
    /// the case, the script, the condition and its world, never the column.
    identity: OnceCell<Identity>,
    /// Whether each run cell keeps what it was graded from.
    keep_grading: bool,
}

impl<'s> Row<'s> {
    /// The row of `case` under `condition`, played by `script`, with the
    /// run's `cache` and the worker's process `seats`.
    #[must_use]
    pub fn new(
        case: &'s Case,
        condition: &'s Condition,
        script: Rc<AttackScript>,
        cache: &'s Arc<RunCache>,
        seats: &'s WorkerSeats,
    ) -> Row<'s> {
        Row { case, condition, script, cache, seats, identity: OnceCell::new(), keep_grading: false }
    }

    /// The same row, its cells keeping what they were graded from.
    #[must_use]
    pub fn keeping_grading(mut self, keep: bool) -> Row<'s> {
        self.keep_grading = keep;
        self
    }

    /// Runs the row's cell in `column_id` on its own current-thread runtime
    /// with a paused clock.
    ///
    /// # Errors
    /// When the cell cannot be run at all.
    pub fn run_cell(&self, column_id: &str) -> Result<CellRun, CellError> {
        let seat_clock = self.seat_clock(column_id);
        let clock = seat_clock.unwrap_or(Clock::Virtual);
        let mut builder = tokio::runtime::Builder::new_current_thread();
        builder.enable_time().start_paused(clock == Clock::Virtual);
        if seat_clock.is_some() {
            // A seat's runtime is read through the cell's own I/O driver.
            builder.enable_io();
        }
        let runtime = builder.build().map_err(|e| CellError::Runtime(e.to_string()))?;
        runtime.block_on(run_cell_async(self, column_id, clock))
    }

    /// The clock a seat's column runs on; `None` for a built-in column.
    fn seat_clock(&self, column_id: &str) -> Option<Clock> {
        match column(self.seats.seats(), column_id).map(|c| c.kind) {
            Some(ColumnKind::Process(index) | ColumnKind::PromptedProcess(index) | ColumnKind::LiveMcp(index, _)) => {
                Some(self.seats.seats().get(index).map_or(Clock::Virtual, |seat| seat.launch.clock))
            }
            _ => None,
        }
    }

    /// The row's identity, computed from `world` (a fresh world of this row)
    /// the first time it is asked for; the world's part is shared with every
    /// row of this worker whose condition arms the world alike.
    fn identity(&self, world: &World) -> Result<Identity, CellError> {
        if let Some(identity) = self.identity.get() {
            return Ok(identity.clone());
        }
        let options = &self.condition.world;
        let world_identity = self
            .cache
            .world_identity(options, || WorldIdentity::of(world, options, |e, t| self.cache.policy_hash(e, t)))?;
        let identity = Identity::new(self.case, &self.script, &self.condition.id, world_identity)?;
        Ok(self.identity.get_or_init(|| identity).clone())
    }
}

async fn run_cell_async(row: &Row<'_>, column_id: &str, clock: Clock) -> Result<CellRun, CellError> {
    let (case, condition, script) = (row.case, row.condition, &row.script);
    let key = CellKey { case: case.id.clone(), condition: condition.id.clone(), column: column_id.to_string() };
    let column = column(row.seats.seats(), column_id).ok_or_else(|| NotInSuite { cell: key.trial_name() })?;
    let world = World::build(&condition.world)?;
    let identity = row.identity(&world)?;
    let messaging = MessagingRun::before_turns(&world, &condition.world).await;
    let turns = run_turns(&world, &condition.world, script, &key, column.kind, row.cache, row.seats).await?;
    if clock == Clock::Real {
        // Every turn has ended and the runtime has reported: nothing works
        // in real time any more, so the quiet window runs on a paused clock
        // rather than for ten real minutes.
        tokio::time::pause();
    }
    let after_result = activity_after_result(&world).await;
    let records_of = RecordContext {
        case,
        condition,
        column_id,
        identity,
        identity_tools: &world.requested_tools,
        multi_turn: turns.len() > 1,
        clock,
    };
    let records = world.fixtures.audit.with_events(|audit| assemble_records(&turns, audit, &records_of))?;
    let facts = turns
        .last()
        .map(|t| TurnFacts::read(&t.result, world.ledger.as_deref()).with_after_result(after_result))
        .unwrap_or_default();
    let evidence = GradingEvidence {
        receipts: receipts_of(column.kind, script, &turns, &records),
        messaging: messaging.observe(&world, &turns),
        records,
        facts,
        witness: turns.iter().filter_map(|turn| turn.witness.clone()).collect(),
    };
    let limits = column.kind.limits(script, condition).grading;
    let rules = GradingRules {
        column_id,
        script,
        expect_turn: condition.expect_turn.as_ref(),
        limits: &limits,
        messaging: condition.world.messaging.as_ref(),
    };
    let Some(graded) = grade_cell(&evidence, rules) else {
        return Err(CellError::Record { execution_id: case.id.clone(), detail: "the cell ran no turn".to_string() });
    };
    let effects = evidence.messaging.as_ref().zip(graded.messaging.as_ref()).map(|(o, g)| messaging_effects(o, g));
    let cell = graded.cell;
    let hashes = evidence_of(&key, &evidence.records)?;
    let snapshot = cell_snapshot(&cell, &turns, &evidence.records, &evidence.receipts, &world).with_messaging(effects);
    let snapshot = Snapshot::of(&snapshot);
    let world_hash = records_of.identity.world.hash.clone();
    let grading = row.keep_grading.then_some(evidence);
    let start_breach = turns.first().and_then(|t| t.breach.clone()).filter(|b| b.phase == BreachPhase::Start);
    Ok(CellRun {
        key,
        cell,
        evidence: hashes,
        snapshot,
        golden: None,
        world_hash,
        grading,
        start_breach,
        reruns: Vec::new(),
    })
}

/// One record per turn, each assembled from the cell's whole audit trail.
fn assemble_records(
    turns: &[ExecutedTurn],
    audit: &[AuditEvent],
    records_of: &RecordContext<'_>,
) -> Result<Vec<ExecutionRecord>, CellError> {
    let mut records = Vec::with_capacity(turns.len());
    for turn in turns {
        let input = assembly_input(turn, audit, records_of)?;
        let execution_id = &turn.request.execution_id;
        records.push(
            assemble_record(input)
                .map_err(|e| CellError::Record { execution_id: execution_id.clone(), detail: e.to_string() })?,
        );
    }
    Ok(records)
}

/// What each attempt of the cell was answered: the adversary reports its
/// own receipts; a driven column is read from its records, the stricter
/// source, since a seat that skipped a call leaves no operation behind.
fn receipts_of(
    kind: ColumnKind,
    script: &AttackScript,
    turns: &[ExecutedTurn],
    records: &[ExecutionRecord],
) -> Vec<AttemptReceipt> {
    if !kind.is_driven() {
        return turns.iter().filter_map(|t| t.report.as_ref()).flat_map(|r| r.receipts.clone()).collect();
    }
    turns
        .iter()
        .zip(records)
        .flat_map(|(turn, record)| receipts_from_record(script, turn.turn, &turn.request.execution_id, record))
        .collect()
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
    /// The tools the identity's canonical tool bytes were written from (the
    /// world's requested tools).
    pub identity_tools: &'a [ToolDefinition],
    /// Whether the script runs more than one turn (run ids then carry the turn).
    pub multi_turn: bool,
    /// The clock the turns ran on; a record of a real-clock turn says so.
    pub clock: Clock,
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
            world_hash: cx.identity.world.hash.clone(),
            evaluator_hash: cx.identity.evaluator.clone(),
            seed: None,
            metadata: None,
        },
        system: SystemInput {
            protocol_version: PROTOCOL_VERSION.to_string(),
            shared_os_version: REFERENCE_VERSION.to_string(),
            adapter_id: column_id.to_string(),
            policy_hash: turn_policy_hash(turn, cx)?,
            metadata: system_metadata(turn, cx.clock),
            ..SystemInput::default()
        },
        runtime: None,
        state: None,
        cost: CostInput::default(),
        audit_ref: None,
        recorded_at: None,
    })
}

/// What a turn's record says of how it ran: that its instants are
/// wall-clock (not reproducible), and how its runtime broke the protocol.
fn system_metadata(turn: &ExecutedTurn, clock: Clock) -> Option<Map<String, Value>> {
    let mut metadata = Map::new();
    if clock == Clock::Real {
        metadata.insert("clock".to_string(), Value::from("real"));
    }
    if let Some(breach) = turn.breach.as_ref().and_then(|breach| serde_json::to_value(breach).ok()) {
        metadata.insert(BREACH_KEY.to_string(), breach);
    }
    (!metadata.is_empty()).then_some(metadata)
}

/// The policy hash of `turn`: the identity's own when the turn requested the
/// world's tools with the world's namespaces, else its own.
fn turn_policy_hash(turn: &ExecutedTurn, cx: &RecordContext<'_>) -> Result<String, CanonicalError> {
    let (enabled, tools) = (&turn.request.context.enabled_tool_namespaces, &turn.request.tools);
    if **tools == *cx.identity_tools && *enabled == cx.identity.world.policy.0 {
        Ok(cx.identity.world.policy.1.clone())
    } else {
        policy_hash(enabled, tools)
    }
}
