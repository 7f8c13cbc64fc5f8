//! The executor: validates a request, opens the turn through the kernel,
//! runs the seated runtime inside the envelope, and records the ending.

use crate::annotations::Annotations;
use crate::deadline::TurnDeadlines;
use crate::error::{ConstructionError, ExecuteError};
use crate::events::{EventKind, EventLog};
use crate::host::RuntimeHost;
use crate::kernel_call::{kernel_op, race, Thrown};
use crate::options::{ExecuteOptions, ExecutorOptions, TurnErrorContext};
use crate::outcome::{catch_path, envelope_error, handle_candidate, turn_end, Ending};
use crate::retry::RetryLedger;
use crate::runtime::RuntimePlugin;
use crate::tasks::TaskSet;
use crate::turn::{Catalogue, InFlight, Turn};
use crate::visible::{context_mismatch, resolve_limits, runtime_request};
use serde_json::{json, Map, Value};
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{ExecutionRequest, ExecutionResult, ExecutionStatus, RuntimeManifest};
use sharedos_model::validate::Validate;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_port::turn_kernel::{TurnKernel, TurnScope};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// SharedOS's executor: the fixed layer around one seated runtime.
pub struct Executor {
    kernel: Rc<dyn TurnKernel>,
    runtime: Rc<dyn RuntimePlugin>,
    manifest: RuntimeManifest,
    options: ExecutorOptions,
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("manifest", &self.manifest)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Executor {
    /// Seats `runtime` over `kernel`; the manifest is validated and snapshotted.
    ///
    /// # Errors
    /// When the manifest breaks the schema or an option is out of range.
    pub fn new(
        kernel: Rc<dyn TurnKernel>,
        runtime: Rc<dyn RuntimePlugin>,
        options: ExecutorOptions,
    ) -> Result<Executor, ConstructionError> {
        options.validate()?;
        let manifest = runtime.manifest();
        manifest.validate().map_err(ConstructionError::InvalidManifest)?;
        Ok(Executor { kernel, runtime, manifest, options })
    }

    /// The manifest snapshot taken at construction.
    #[must_use]
    pub fn runtime_manifest(&self) -> &RuntimeManifest {
        &self.manifest
    }

    /// Runs one turn and records its ending with the kernel.
    ///
    /// # Errors
    /// When the request fails the ExecutionRequest schema (no turn runs and
    /// nothing is recorded).
    pub async fn execute(
        &self,
        request: ExecutionRequest,
        options: ExecuteOptions,
    ) -> Result<ExecutionResult, ExecuteError> {
        self.execute_borrowed(&request, options).await
    }

    /// [`Executor::execute`] for a caller that keeps its request (a host
    /// that records it), sparing a copy of the whole request.
    ///
    /// # Errors
    /// As [`Executor::execute`].
    pub async fn execute_borrowed(
        &self,
        request: &ExecutionRequest,
        options: ExecuteOptions,
    ) -> Result<ExecutionResult, ExecuteError> {
        request.validate().map_err(ExecuteError::InvalidRequest)?;
        let (result, failure_source) = self.run_turn(request, &options).await;
        let end = turn_end(&result, failure_source.as_deref());
        let context = request.context.at(&result.completed_at);
        self.kernel.record_turn_end(&context, &end).await;
        Ok(result)
    }

    /// The turn body: everything between validation and `turn.ended`.
    async fn run_turn(
        &self,
        request: &ExecutionRequest,
        options: &ExecuteOptions,
    ) -> (ExecutionResult, Option<String>) {
        let started_at = self.options.clock.now();
        let observers = options.on_event.iter().chain(self.options.on_event.iter()).cloned().collect();
        let events = EventLog::new(
            self.options.clock.clone(),
            self.options.create_id.clone(),
            &request.execution_id,
            &request.context.trace_id,
            observers,
        );
        if let Some(code) = context_mismatch(request) {
            events.emit(EventKind::TurnDenied, json!({ "code": code.as_str() }));
            let ending = Ending::with_error(ExecutionStatus::Denied, envelope_error(code, None));
            let metadata = Annotations::default().merge(None, &self.result_provenance());
            let result = self.result(request, &started_at, ending, events.take(), metadata);
            return (result, events.last_failure_source());
        }
        let turn = self.open_turn(request, options, events);
        let _guard = TaskGuard(turn.tasks.clone());
        let scope = Rc::new(ScopeSlot::default());
        let ending = if turn.deadlines.hard().is_aborted() {
            Ending::with_error(ExecutionStatus::Cancelled, envelope_error(ReasonCode::TurnCancelled, Some(true)))
        } else {
            let body = self.body(&turn, request, &scope);
            tokio::select! {
                biased;
                () = turn.tasks.drive() => unreachable_ending(),
                ending = body => ending,
            }
        };
        let metadata = turn.annotations.merge(ending.outcome_metadata.as_ref(), &self.result_provenance());
        let result = self.result(request, &started_at, ending, turn.events.take(), metadata);
        close_turn(&turn, &scope);
        turn.tasks.drive_to_completion().await;
        (result, turn.events.last_failure_source())
    }

    fn open_turn(&self, request: &ExecutionRequest, options: &ExecuteOptions, events: EventLog) -> Rc<Turn> {
        let limits = resolve_limits(request, &self.options);
        let tasks = TaskSet::new();
        let deadlines =
            TurnDeadlines::start(options.signal.as_ref(), limits.timeout_ms, self.options.drain_grace_ms, &tasks);
        Rc::new(Turn {
            kernel: self.kernel.clone(),
            clock: self.options.clock.clone(),
            provenance: self.event_provenance(),
            execution_id: request.execution_id.clone(),
            context: request.context.at(&self.options.clock.now()),
            limits,
            deadlines,
            tasks,
            events,
            annotations: Annotations::default(),
            ledger: RetryLedger::new(),
            catalogue: RefCell::new(Catalogue::default()),
            budget: RefCell::default(),
            active: Cell::new(true),
            in_flight: InFlight::default(),
            stamped: RefCell::new(None),
        })
    }

    /// The try block and, on a throw, the catch path.
    async fn body(&self, turn: &Rc<Turn>, request: &ExecutionRequest, scope: &Rc<ScopeSlot>) -> Ending {
        match self.try_block(turn, request, scope).await {
            Ok(ending) => ending,
            Err(thrown) => {
                let who = TurnErrorContext {
                    execution_id: request.execution_id.clone(),
                    trace_id: request.context.trace_id.clone(),
                };
                catch_path(turn, thrown, self.options.on_turn_error.as_ref(), &who).await
            }
        }
    }

    /// The turn body: open, admit, reach, list, run, handle the outcome (E7,
    /// E10–E12, E30–E41).
    async fn try_block(
        &self,
        turn: &Rc<Turn>,
        request: &ExecutionRequest,
        scope: &Rc<ScopeSlot>,
    ) -> Result<Ending, Thrown> {
        let kernel = turn.kernel.clone();
        let (context, hard) = (turn.context.clone(), turn.deadlines.hard().clone());
        let slot = scope.clone();
        kernel_op(turn, async move {
            let opened = kernel.open_turn_authority(&context, &hard).await?;
            slot.store(opened);
            Ok(())
        })
        .await?;
        let (kernel, context, hard, agent) =
            (turn.kernel.clone(), turn.context.clone(), turn.deadlines.hard().clone(), request.agent.clone());
        let decision = kernel_op(turn, async move { kernel.admit_turn(&context, &agent, &hard).await }).await?;
        if !decision.allowed {
            let code = decision.reason_code;
            turn.events.emit(EventKind::TurnDenied, json!({ "code": code.as_str() }));
            return Ok(Ending::with_error(ExecutionStatus::Denied, envelope_error(code, None)));
        }
        let (kernel, context, hard) = (turn.kernel.clone(), turn.context.clone(), turn.deadlines.hard().clone());
        let reach = kernel_op(turn, async move { kernel.reach(&context, &hard).await }).await?;
        let (kernel, context, hard) = (turn.kernel.clone(), turn.context.clone(), turn.deadlines.hard().clone());
        let listed = kernel_op(turn, async move { kernel.list_tools(&context, &hard).await }).await?;
        let (catalogue, tools) = Catalogue::effective(listed, &request.tools);
        *turn.catalogue.borrow_mut() = catalogue;
        let visible = Rc::new(runtime_request(request, &turn.context, reach, tools));
        let visible_tools = turn.catalogue.borrow().names();
        turn.events.emit(
            EventKind::TurnStarted,
            json!({ "agent": request.agent, "visibleTools": visible_tools, "runtime": turn.provenance }),
        );
        self.run_runtime(turn, visible).await
    }

    async fn run_runtime(
        &self,
        turn: &Rc<Turn>,
        request: Rc<sharedos_model::execution::RuntimeTurnRequest>,
    ) -> Result<Ending, Thrown> {
        let host = RuntimeHost::new(turn.clone());
        let hard = turn.deadlines.hard().clone();
        // The runtime gets a follower: it fires with the hard signal, but the
        // runtime cannot stop the turn by aborting it.
        let signal = AbortSignal::new();
        hard.forward_to(&signal, None);
        let candidate = race(&hard, self.runtime.run(request, host, signal))
            .await
            .map_err(Thrown::Aborted)?
            .map_err(Thrown::Runtime)?;
        if let Some(outage) = turn.ledger.outage() {
            return Err(Thrown::Outage(outage));
        }
        handle_candidate(turn, candidate).await
    }

    fn event_provenance(&self) -> Value {
        json!({ "id": self.manifest.id, "version": self.manifest.version, "protocolVersion": self.manifest.protocol_version })
    }

    fn result_provenance(&self) -> Value {
        let mut provenance = self.event_provenance();
        if let (Some(metadata), Value::Object(map)) = (&self.manifest.metadata, &mut provenance) {
            map.insert("metadata".into(), Value::Object(metadata.clone()));
        }
        provenance
    }

    fn result(
        &self,
        request: &ExecutionRequest,
        started_at: &str,
        ending: Ending,
        events: Arc<[sharedos_model::execution::ExecutionEvent]>,
        metadata: Map<String, Value>,
    ) -> ExecutionResult {
        ExecutionResult {
            version: request.version.clone(),
            execution_id: request.execution_id.clone(),
            trace_id: request.context.trace_id.clone(),
            status: ending.status,
            output: ending.output,
            error: ending.error,
            escalation: ending.escalation,
            events,
            started_at: started_at.to_string(),
            completed_at: self.options.clock.now(),
            metadata: Some(metadata),
        }
    }
}

/// Cleanup on every way out (E25, E60): close the host, release the lease,
/// stop the kernel, clear timers.
fn close_turn(turn: &Turn, scope: &ScopeSlot) {
    turn.active.set(false);
    turn.annotations.close();
    scope.close();
    turn.deadlines.abort(AbortReason::TurnClosed);
    turn.deadlines.dispose();
}

fn unreachable_ending() -> Ending {
    // `TaskSet::drive` never resolves; this keeps the select total.
    Ending::with_error(ExecutionStatus::Failed, envelope_error(ReasonCode::RuntimeFailed, Some(false)))
}

/// The turn's authority lease, closed at cleanup even if it arrives late.
#[derive(Default)]
struct ScopeSlot {
    scope: RefCell<Option<Rc<dyn TurnScope>>>,
    closed: Cell<bool>,
}

impl ScopeSlot {
    fn store(&self, scope: Rc<dyn TurnScope>) {
        if self.closed.get() {
            scope.close();
        } else {
            *self.scope.borrow_mut() = Some(scope);
        }
    }

    fn close(&self) {
        self.closed.set(true);
        if let Some(scope) = self.scope.borrow_mut().take() {
            scope.close();
        }
    }
}

/// Drops whatever the turn left running if `execute` itself is dropped,
/// breaking the turn ↔ task reference cycle.
struct TaskGuard(TaskSet);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.0.clear();
    }
}
