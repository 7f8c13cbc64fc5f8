//! Running one cell's turns, in order, against one world on a paused clock.

use super::cache::RunCache;
use super::process_script::turn_script;
use super::process_seats::WorkerSeats;
use super::request::{execution_id, turn_request};
use super::seat::{live_mcp_seat, seat, SeatScript};
use crate::run::adversary::Adversary;
use sharedos_envelope::error::ExecuteError;
use sharedos_envelope::executor::Executor;
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions, SequentialIds};
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_envelope::tasks::TaskSet;
use sharedos_grading::column::ColumnKind;
use sharedos_grading::input::script::AttackScript;
use sharedos_grading::input::world::World;
use sharedos_grading::record::receipt::{read_adversarial_report, AdversarialTurnReport, AttemptReceipt};
use sharedos_grading::record::turn::ExecutedTurn;
use sharedos_grading::vocab::CellKey;
use sharedos_model::execution::{ExecutionRequest, ExecutionResult};
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_process::breach::{Breach, BreachPhase, RuntimeProtocol};
use sharedos_process::runtime::{ProcessRuntime, ScriptFor};
use sharedos_process::violation::quote;
use sharedos_world::options::WorldOptions;
use std::rc::Rc;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

/// A turn that could not be executed at all (a harness bug, never a verdict).
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The executor refused its construction.
    #[error("construct the executor for {execution_id}: {detail}")]
    Construction {
        /// The turn's execution id.
        execution_id: String,
        /// Why.
        detail: String,
    },
    /// The executor refused the request it was handed.
    #[error("execute {execution_id}: {detail}")]
    Execution {
        /// The turn's execution id.
        execution_id: String,
        /// Why.
        detail: String,
    },
}

/// Runs every turn of `script` for one cell with the column's runtime
/// seated, the run's cache in `cache`.
///
/// # Errors
/// When the executor cannot be built or refuses a request.
pub async fn run_turns(
    world: &World,
    options: &WorldOptions,
    script: &Rc<AttackScript>,
    cell: &CellKey,
    column: ColumnKind,
    cache: &Arc<RunCache>,
    seats: &WorkerSeats,
) -> Result<Vec<ExecutedTurn>, TurnError> {
    let mut turns = Vec::new();
    // The envelope's clock is the world's plus the virtual time the cell
    // has run, so deadlines, drains and slow tools show in every instant.
    let origin = tokio::time::Instant::now();
    for turn in 1..=script.turn_count() {
        let id = execution_id(&cell.case, &cell.condition, &cell.column, turn);
        let clock = world.fixtures.clock.clone();
        let executor_options = ExecutorOptions {
            clock: Rc::new(move || clock.instant().plus_millis(elapsed_ms(origin)).to_rfc3339()),
            create_id: Rc::new(SequentialIds::new(&format!("{id}.event"))),
            drain_grace_ms: options.drain_grace_ms.unwrap_or(0),
            ..ExecutorOptions::default()
        };
        let mut request = turn_request(world, options, &id, turn);
        let seat_script = SeatScript::new(script, turn, &request);
        let mut witness = None;
        let no_seat =
            |index| TurnError::Construction { execution_id: id.clone(), detail: format!("no seat at index {index}") };
        if column.is_driven() {
            request.message.payload = seat_script.payload();
        }
        let seated = match column {
            ColumnKind::Adversary => Seated::Adversary(Adversary::new(Rc::clone(script), turn)),
            ColumnKind::Process(index) | ColumnKind::PromptedProcess(index) => {
                let seat = seats.seat(index).ok_or_else(|| no_seat(index))?;
                seat.prepare().await;
                Seated::Process(if matches!(column, ColumnKind::Process(_)) {
                    let (script, turn_number) = (Rc::clone(script), turn);
                    let build: ScriptFor = Rc::new(move |request| turn_script(&script, turn_number, request));
                    ProcessRuntime::new(seat, Some(build))
                } else {
                    let process = ProcessRuntime::new(seat, None).with_call_ids(seat_script.call_ids());
                    match seat_script.declare_step() {
                        Some(steps) => process.with_declared_steps(steps),
                        None => process,
                    }
                })
            }
            ColumnKind::LiveMcp(index, _) => {
                let seat = seats.seats().get(index).ok_or_else(|| no_seat(index))?;
                let (plugin, log) = live_mcp_seat(seat, &seat_script)
                    .map_err(|e| TurnError::Construction { execution_id: id.clone(), detail: e.to_string() })?;
                witness = log;
                Seated::Driven(plugin)
            }
            ColumnKind::ModelScripted | ColumnKind::VendorScripted(_) | ColumnKind::McpScripted => Seated::Driven(
                seat(column, script, turn, &seat_script, cache)
                    .map_err(|e| TurnError::Construction { execution_id: id.clone(), detail: e.to_string() })?,
            ),
        };
        let executor = Executor::new(world.kernel.clone(), seated.plugin(), executor_options)
            .map_err(|e| TurnError::Construction { execution_id: id.clone(), detail: e.to_string() })?;
        let result = execute_turn(&executor, &request, options, &seated)
            .await
            .map_err(|e| TurnError::Execution { execution_id: id.clone(), detail: e.to_string() })?;
        let mut report = read_adversarial_report(&result);
        if let Some(report) = report.as_mut() {
            add_late_receipts(report, seated.late_receipts(), script);
        }
        let witness = witness.map(|log| std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner)));
        let breach = seated.breach();
        turns.push(ExecutedTurn { turn, request, result, report, witness, breach });
    }
    Ok(turns)
}

fn elapsed_ms(origin: tokio::time::Instant) -> i64 {
    i64::try_from(tokio::time::Instant::now().saturating_duration_since(origin).as_millis()).unwrap_or(i64::MAX)
}

/// Executes one turn as the host the condition describes (a signal already
/// aborted, or one it aborts at an instant), driving the adversary's
/// background calls beside it, then makes the adversary's after-close steps
/// and lets every background call settle.
async fn execute_turn(
    executor: &Executor,
    request: &ExecutionRequest,
    options: &WorldOptions,
    seated: &Seated,
) -> Result<ExecutionResult, ExecuteError> {
    let background = seated.background();
    let done = AbortSignal::new();
    let signal = host_signal(options, &background, &done);
    if let Seated::Adversary(adversary) = seated {
        adversary.start_turn();
    }
    let execution = executor.execute_borrowed(request, ExecuteOptions { signal, on_event: None });
    tokio::pin!(execution);
    let result = loop {
        tokio::select! {
            biased;
            result = &mut execution => break result,
            () = background.drive() => {}
        }
    };
    done.abort(AbortReason::TurnClosed);
    let settle = async {
        match seated {
            Seated::Adversary(adversary) => adversary.after_close().await,
            Seated::Process(process) => process.finish().await,
            Seated::Driven(_) => {}
        }
        background.drive_to_completion().await;
    };
    // An envelope that never answers a call must fail its row on the
    // receipts it leaves missing, not hold the run: past the limit the
    // unanswered steps are dropped (on a paused clock the wait is free).
    let _ = tokio::time::timeout(SETTLE_LIMIT, settle).await;
    result
}

/// How long after a turn's result its after-close steps and background
/// calls may take to settle: twice the longest turn.
const SETTLE_LIMIT: Duration = Duration::from_millis(2 * 600_000);

/// Who sits in the seat for one turn, with what the runner drives beside it.
enum Seated {
    /// The embedded adversary.
    Adversary(Adversary),
    /// A runtime seated from outside.
    Process(ProcessRuntime),
    /// The standard loop with a driver.
    Driven(Rc<dyn RuntimePlugin>),
}

impl Seated {
    fn plugin(&self) -> Rc<dyn RuntimePlugin> {
        match self {
            Seated::Adversary(adversary) => Rc::new(adversary.clone()),
            Seated::Process(process) => Rc::new(process.clone()),
            Seated::Driven(plugin) => Rc::clone(plugin),
        }
    }

    fn background(&self) -> TaskSet {
        match self {
            Seated::Adversary(adversary) => adversary.background(),
            Seated::Process(process) => process.background(),
            Seated::Driven(_) => TaskSet::new(),
        }
    }

    /// How a runtime seated from outside broke the protocol in the turn:
    /// what the process saw, or else a receipt of its report that does
    /// not read (which would otherwise be dropped unseen).
    fn breach(&self) -> Option<Breach> {
        let Seated::Process(process) = self else { return None };
        process.breach().or_else(|| {
            let receipts = process.receipts()?;
            receipts.iter().enumerate().find_map(|(index, receipt)| {
                let value = serde_json::Value::Object(receipt.clone());
                let error = AttemptReceipt::from_value(&value).err()?;
                Some(Breach {
                    code: "runtime_bad_message".to_string(),
                    message: format!("receipt {index} of the report does not read: {error}"),
                    phase: BreachPhase::AfterReport,
                    received: Some(quote(value.to_string().as_bytes())),
                    stderr_tail: None,
                    protocol: Some(RuntimeProtocol::CURRENT),
                })
            })
        })
    }

    /// Receipts made after the runtime returned (after-close steps, calls
    /// answered late): the adversary's log, or a scripted seat's report.
    fn late_receipts(&self) -> Vec<AttemptReceipt> {
        match self {
            Seated::Adversary(adversary) => adversary.receipts(),
            Seated::Process(process) => process
                .receipts()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|receipt| AttemptReceipt::from_value(&serde_json::Value::Object(receipt)).ok())
                .collect(),
            Seated::Driven(_) => Vec::new(),
        }
    }
}

/// The host's cancellation signal, when the condition arms one: aborted
/// before the turn, or by a timer on `background` that `done` disarms.
fn host_signal(options: &WorldOptions, background: &TaskSet, done: &AbortSignal) -> Option<AbortSignal> {
    if options.host_signal_aborted {
        let signal = AbortSignal::new();
        signal.abort(AbortReason::HostCancelled);
        return Some(signal);
    }
    let at = options.host_cancels_at_ms?;
    let (signal, timer, done) = (AbortSignal::new(), tokio::time::sleep(Duration::from_millis(at)), done.clone());
    let cancel = signal.clone();
    background.spawn(async move {
        tokio::select! {
            () = timer => cancel.abort(AbortReason::HostCancelled),
            () = done.aborted() => {}
        }
    });
    Some(signal)
}

/// Adds the receipts the report could not carry (calls answered after the
/// runtime returned, steps made after the turn closed), in declared order.
fn add_late_receipts(report: &mut AdversarialTurnReport, late: Vec<AttemptReceipt>, script: &AttackScript) {
    let late: Vec<_> =
        late.into_iter().filter(|r| !report.receipts.iter().any(|k| k.attempt_id == r.attempt_id)).collect();
    if late.is_empty() {
        return;
    }
    report.receipts.extend(late);
    let position = |id: &str| script.attempts.iter().position(|a| a.id == id);
    report.receipts.sort_by_key(|r| position(&r.attempt_id));
}
