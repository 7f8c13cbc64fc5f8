//! A runtime seated from outside: [`ProcessRuntime`] speaks
//! `sharedos-runtime/2` with a [`Session`] for one turn, mapping every
//! request onto the five host members and every answer back.
//!
//! The runtime is served for the whole turn by a loop on
//! [`ProcessRuntime::background`], which the runner drives beside the turn
//! and after it: calls left in flight, `wait` timers and the draining
//! watcher run there too, so an answer that lands after the runtime
//! returned (or was stopped) still reaches it, and its requests are
//! answered whenever they come. After the turn the runner calls
//! [`ProcessRuntime::finish`]: the runtime is told `closed`, makes any
//! after-close requests, and (a scripted seat) sends its receipts; then
//! the harness writes a numbered `fence` and reads until the runtime
//! echoes it. Every line before the echo is the turn's, whenever it
//! arrives, so a late line is blamed on the turn that wrote it on every
//! run, and the next `turn` is written only after the echo.

mod phase;

use self::phase::TurnPhase;
use crate::breach::{Breach, BreachPhase};
use crate::message::{Clock, HarnessMessage, HostErrorMessage, InvokeOptions, RuntimeMessage, PROTOCOL};
use crate::placement::ThreadPin;
use crate::seat::ProcessSeat;
use crate::session::Session;
use crate::violation::{Awaited, Misplaced, Violation};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_envelope::error::{HostError, RuntimeFailure};
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_envelope::runtime::{fail, RuntimePlugin};
use sharedos_envelope::tasks::TaskSet;
use sharedos_model::execution::{RuntimeEvent, RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::tool::{ProtocolError, ToolCall};
use sharedos_port::error::KernelError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;
use tokio::sync::oneshot;

/// The longest request id a runtime may choose, in characters.
const MAX_REQUEST_ID_CHARS: usize = 128;

/// Builds a scripted seat's `script` for the request the turn hands it.
pub type ScriptFor = Rc<dyn Fn(&RuntimeTurnRequest) -> Value>;

/// The id a call is recorded under, given its tool and arguments: a
/// prompted seat makes the listed calls under ids of its own, and the
/// harness records each under the id the row reads it back by.
pub type CallIdFor = Rc<dyn Fn(&str, &Map<String, Value>) -> Option<String>>;

/// The step to declare for the call released at this index (0-based) when
/// the runtime declares none, as a driver declares it on a seat's behalf.
pub type StepFor = Rc<dyn Fn(u64, &RuntimeTurnRequest) -> Option<u64>>;

/// How the runtime ended its turn, as the serving loop hands it to `run`.
enum Ending {
    Outcome(Value),
    Thrown(String),
    Broke(Breach),
}

/// What one turn's runtime shares with the runner driving it.
#[derive(Default)]
struct TurnShared {
    turn: RefCell<String>,
    host: RefCell<Option<RuntimeHost>>,
    background: TaskSet,
    ids: RefCell<BTreeSet<String>>,
    origin: Cell<Option<tokio::time::Instant>>,
    /// Where the turn is, as `run`, `finish` and the runtime have moved it.
    phase: Cell<TurnPhase>,
    /// Where the serving loop hands the runtime's ending to `run`.
    ending: RefCell<Option<oneshot::Sender<Ending>>>,
    /// The turn is over: timers, the watcher and the loop stop.
    done: AbortSignal,
    /// The serving loop has ended (the fence echoed, a violation, or stopped).
    served: AbortSignal,
    /// The runtime owes nothing of the turn but the fence's echo: a
    /// scripted seat reported, or (a prompted seat) `closed` was written.
    settled: AbortSignal,
    /// How many lines of the turn the harness had written once it wrote
    /// `closed`: a report's `seen` must count them.
    closed_line: Cell<Option<u64>>,
    /// The number of the fence written for the turn: from then on the
    /// harness writes nothing more about it.
    fence: Cell<Option<u64>>,
    breach: RefCell<Option<Breach>>,
    receipts: RefCell<Option<Vec<Map<String, Value>>>>,
    /// Calls asked for and not yet answered.
    in_flight: Cell<usize>,
    /// Calls asked for so far.
    released: Cell<u64>,
    /// The request the turn handed out.
    request: RefCell<Option<Rc<RuntimeTurnRequest>>>,
    /// How much the runtime had written on stderr when the turn began.
    stderr_mark: Cell<u64>,
    /// The turn's script, for a scripted seat.
    script: RefCell<Option<Value>>,
    /// The turn was handed to a fresh process once already. Apart from
    /// the phase: a once-per-turn allowance, spent in whichever phase the
    /// process exits unheard.
    restarted: Cell<bool>,
    /// The turn's thread and its runtime held on one CPU, until it ends.
    pin: RefCell<Option<ThreadPin>>,
}

impl TurnShared {
    /// Moves the phase by `step`, answering where it was.
    fn advance(&self, step: fn(TurnPhase) -> TurnPhase) -> TurnPhase {
        self.phase.replace(step(self.phase.get()))
    }

    /// Marks the turn settled once the runtime owes nothing but the
    /// fence's echo. A prompted seat owes nothing after `closed`, and is
    /// busy from then on: an answer still in flight, which may need
    /// virtual time to come, is not waited for, and (written after the
    /// fence) never written.
    fn settle_if_owed_nothing(&self, scripted: bool) {
        let phase = self.phase.get();
        let owed_nothing = if scripted { phase.has_reported() } else { phase.was_closed() };
        if owed_nothing {
            self.settled.abort(AbortReason::TurnClosed);
        }
    }

    /// Whether the harness still writes about the turn: not once the
    /// runtime reported, nor once its fence is written.
    fn still_told(&self) -> bool {
        !self.phase.get().has_reported() && self.fence.get().is_none()
    }
}

/// One turn of a seat's runtime.
#[derive(Clone)]
pub struct ProcessRuntime {
    seat: Rc<ProcessSeat>,
    script: Option<ScriptFor>,
    call_ids: Option<CallIdFor>,
    steps: Option<StepFor>,
    shared: Rc<TurnShared>,
}

impl std::fmt::Debug for ProcessRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessRuntime").field("seat", &self.seat).finish_non_exhaustive()
    }
}

impl ProcessRuntime {
    /// The runtime of `seat` for one turn; a scripted seat passes how the
    /// turn's `script` is built from its request.
    #[must_use]
    pub fn new(seat: Rc<ProcessSeat>, script: Option<ScriptFor>) -> ProcessRuntime {
        ProcessRuntime { seat, script, call_ids: None, steps: None, shared: Rc::default() }
    }

    /// The same runtime, with `steps` declared for calls that declare none.
    #[must_use]
    pub fn with_declared_steps(mut self, steps: StepFor) -> ProcessRuntime {
        self.steps = Some(steps);
        self
    }

    /// The same runtime, its calls recorded under the ids `call_ids` gives.
    #[must_use]
    pub fn with_call_ids(mut self, call_ids: CallIdFor) -> ProcessRuntime {
        self.call_ids = Some(call_ids);
        self
    }

    /// What the runner drives beside the turn and after it.
    #[must_use]
    pub fn background(&self) -> TaskSet {
        self.shared.background.clone()
    }

    /// Ends the turn with the runtime: tells it `closed`, serves its
    /// after-close requests, (a scripted seat) waits for its report, then
    /// fences the turn off.
    pub async fn finish(&self) {
        let turn = self.shared.turn.borrow().clone();
        if let Some(session) = self.seat.session().filter(|_| !turn.is_empty()) {
            if self.shared.breach.borrow().is_none() {
                self.shared.advance(TurnPhase::close);
                session.write(&HarnessMessage::Closed { turn: &turn });
                self.shared.closed_line.set(Some(session.written_in_turn()));
                self.shared.settle_if_owed_nothing(self.script.is_some());
            }
            let settled = self.shared.settled.clone();
            self.serve_until(&settled).await;
            self.fence(&turn).await;
        }
        self.shared.done.abort(AbortReason::TurnClosed);
        self.shared.background.drive_to_completion().await;
        if let Some(session) = self.seat.session() {
            session.idle();
        }
        self.shared.pin.borrow_mut().take();
    }

    /// The receipts a scripted seat reported after the turn.
    #[must_use]
    pub fn receipts(&self) -> Option<Vec<Map<String, Value>>> {
        self.shared.receipts.borrow().clone()
    }

    /// How the runtime broke the protocol in this turn, if it did: the
    /// turn's record carries it.
    #[must_use]
    pub fn breach(&self) -> Option<Breach> {
        self.shared.breach.borrow().clone()
    }

    /// Records `violation` on this turn, kills the process (the next turn
    /// starts a fresh one), and ends the turn if it still runs.
    fn broke(&self, violation: &Violation, received: Option<String>) {
        let phase = self.shared.phase.get().breach_phase();
        let stderr = self.seat.discard(self.shared.stderr_mark.get());
        let breach = violation.breach(phase, received, &stderr);
        if let Some(ending) = self.shared.ending.borrow_mut().take() {
            let _ = ending.send(Ending::Broke(breach.clone()));
        }
        *self.shared.breach.borrow_mut() = Some(breach);
    }

    /// Drives the turn's background (the serving loop among it) until
    /// `signal` fires or the serving loop ends.
    async fn serve_until(&self, signal: &AbortSignal) {
        let served = self.shared.served.clone();
        tokio::select! {
            biased;
            () = served.aborted() => {}
            () = signal.aborted() => {}
            () = self.shared.background.drive() => {}
        }
    }

    /// Writes the turn's fence, once the runtime owes nothing else, and
    /// serves it until the echo: whatever it writes before the echo is the
    /// turn's. On virtual time the wait is bounded as busy time is; on the
    /// real clock, by the same limit in real time.
    async fn fence(&self, turn: &str) {
        if self.shared.breach.borrow().is_some() || self.shared.served.is_aborted() {
            return;
        }
        let Some(session) = self.seat.session() else { return };
        self.shared.fence.set(Some(session.fence(turn)));
        let served = self.shared.served.clone();
        if session.clock() == Clock::Virtual {
            self.serve_until(&served).await;
            return;
        }
        let limit = session.busy_timeout();
        if tokio::time::timeout(limit, self.serve_until(&served)).await.is_err() {
            let ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
            self.broke(&Violation::NoFenceEcho { ms }, None);
        }
    }

    /// What a violation the session saw means at this point of the turn:
    /// an end of output says what the harness was waiting for, and busy
    /// time past the limit after the fence is a fence never echoed.
    fn explain(&self, violation: Violation) -> Violation {
        match (violation, self.shared.fence.get()) {
            (Violation::Exited { .. }, _) => Violation::Exited { awaited: self.awaited() },
            (Violation::Unresponsive { ms, .. }, Some(_)) => Violation::NoFenceEcho { ms },
            (violation, _) => violation,
        }
    }

    /// What the harness waits for from the runtime now.
    fn awaited(&self) -> Awaited {
        let phase = self.shared.phase.get();
        let ended = phase.ending_received() || phase.has_ended();
        if self.shared.fence.get().is_some() || phase.has_reported() || (self.script.is_none() && ended) {
            Awaited::Fenced
        } else if ended {
            Awaited::Report
        } else {
            Awaited::Ending
        }
    }

    /// Reads and answers the runtime's messages until its report, a
    /// violation, or the end of the turn.
    async fn serve(self, session: Rc<Session>, host: RuntimeHost) {
        let done = self.shared.done.clone();
        let mut session = session;
        loop {
            let message = tokio::select! {
                biased;
                () = done.aborted() => break,
                message = session.next() => message,
            };
            match message.and_then(|message| self.handle(&session, &host, message)) {
                Ok(true) => {}
                Ok(false) => break,
                // The process ended before it said anything of this turn:
                // it exited between turns, and the turn goes to a fresh one.
                Err(Violation::Exited { .. })
                    if !self.shared.phase.get().has_heard() && !self.shared.restarted.replace(true) =>
                {
                    match self.restart(&host).await {
                        Some(fresh) => session = fresh,
                        None => break,
                    }
                }
                Err(violation) => {
                    let violation = self.explain(violation);
                    let received = if violation.is_the_last_line() { session.last_received().await } else { None };
                    self.broke(&violation, received);
                    break;
                }
            }
        }
        self.shared.served.abort(AbortReason::TurnClosed);
    }

    /// Hands the turn to a fresh process: `None` (the turn's breach
    /// recorded) when none starts.
    async fn restart(&self, host: &RuntimeHost) -> Option<Rc<Session>> {
        self.seat.discard(0);
        match self.seat.start().await {
            Ok(fresh) => {
                *self.shared.pin.borrow_mut() = fresh.share_cpu();
                self.shared.stderr_mark.set(fresh.stderr_mark());
                self.write_turn(&fresh, host);
                Some(fresh)
            }
            Err(breach) => {
                if let Some(ending) = self.shared.ending.borrow_mut().take() {
                    let _ = ending.send(Ending::Broke(breach.clone()));
                }
                *self.shared.breach.borrow_mut() = Some(breach);
                None
            }
        }
    }

    /// Writes the `turn` message.
    fn write_turn(&self, session: &Session, host: &RuntimeHost) {
        let Some(request) = self.shared.request.borrow().clone() else { return };
        let script = self.shared.script.borrow();
        session.write(&HarnessMessage::Turn {
            turn: &request.execution_id,
            request: &request,
            limits: host.limits(),
            script: script.as_ref(),
        });
    }

    /// Answers one message; `false` once the runtime echoed the fence.
    fn handle(&self, session: &Session, host: &RuntimeHost, message: RuntimeMessage) -> Result<bool, Violation> {
        self.shared.advance(TurnPhase::hear);
        let turn = self.shared.turn.borrow().clone();
        match message.turn() {
            Some(named) if named != turn => {
                return Err(Violation::WrongTurn { named: named.to_string(), running: turn })
            }
            None => return Err(Violation::OutOfOrder(Misplaced::ReadyMidSession)),
            Some(_) => {}
        }
        let fenced = matches!(message, RuntimeMessage::Fenced { .. });
        if self.shared.phase.get().has_reported() && !fenced {
            return Err(Violation::OutOfOrder(Misplaced::AfterReport { kind: message.kind() }));
        }
        match message {
            RuntimeMessage::InvokeTool { id, call, options, .. } => {
                self.claim(&id)?;
                self.invoke(host, id, call, options);
            }
            RuntimeMessage::Emit { id, event, .. } => {
                self.claim(&id)?;
                let answer = host.emit(RuntimeEvent { kind: event.kind, data: event.data });
                self.answer_host(session, &turn, &id, answer);
            }
            RuntimeMessage::Annotate { id, key, value, .. } => {
                self.claim(&id)?;
                self.answer_host(session, &turn, &id, host.annotate(&key, value));
            }
            RuntimeMessage::Wait { until_ms, seen, .. } => {
                if !session.waits(seen)? {
                    // Stale: written before the runtime read a later line;
                    // it says wait again once it has.
                    return Ok(true);
                }
                // After `closed` only an answer still owed can wake the
                // runtime: waiting with none in flight would wait forever.
                if self.shared.phase.get().was_closed() && self.shared.in_flight.get() == 0 && self.script.is_some() {
                    return Err(Violation::OutOfOrder(Misplaced::WaitWithNothingOwed));
                }
                if let Some(ms) = until_ms {
                    self.wake_at(ms);
                }
            }
            RuntimeMessage::Outcome { outcome, .. } => self.ended_with(session, Ending::Outcome(outcome))?,
            RuntimeMessage::Thrown { error, .. } => self.ended_with(session, Ending::Thrown(error.message))?,
            RuntimeMessage::Report { receipts, seen, .. } => {
                session.has_seen("report", seen)?;
                // Decided by what the runtime had read, not by when the
                // harness read the report: the same on every run.
                if self.shared.closed_line.get().is_none_or(|closed| seen < closed) {
                    return Err(Violation::OutOfOrder(Misplaced::ReportBeforeClosed));
                }
                let Some(reported) = self.shared.phase.get().report() else {
                    return Err(Violation::OutOfOrder(Misplaced::ReportBeforeEnding));
                };
                session.idle();
                self.shared.phase.set(reported);
                *self.shared.receipts.borrow_mut() = Some(receipts);
                self.shared.settle_if_owed_nothing(self.script.is_some());
            }
            RuntimeMessage::Fenced { fence, .. } => {
                let asked = self.shared.fence.get();
                if asked != Some(fence) {
                    return Err(Violation::OutOfOrder(Misplaced::Fenced { asked: asked.is_some() }));
                }
                session.idle();
                return Ok(false);
            }
            RuntimeMessage::Ready { .. } => return Err(Violation::OutOfOrder(Misplaced::ReadyMidSession)),
        }
        Ok(true)
    }

    /// The runtime's ending: handed to `run`, once. One that arrives after
    /// the turn was stopped came too late to count, not twice.
    fn ended_with(&self, session: &Session, ending: Ending) -> Result<(), Violation> {
        session.idle();
        let Some(received) = self.shared.phase.get().receive_ending() else {
            return Err(Violation::AfterOutcome { kind: "a second ending".into() });
        };
        self.shared.phase.set(received);
        if let Some(sender) = self.shared.ending.borrow_mut().take() {
            let _ = sender.send(ending);
        }
        Ok(())
    }

    fn claim(&self, id: &str) -> Result<(), Violation> {
        let chars = id.chars().count();
        if chars == 0 || chars > MAX_REQUEST_ID_CHARS {
            return Err(Violation::BadRequestId { chars, id: id.chars().take(MAX_REQUEST_ID_CHARS + 1).collect() });
        }
        if self.shared.ids.borrow_mut().insert(id.to_string()) {
            Ok(())
        } else {
            Err(Violation::DuplicateId { id: id.to_string() })
        }
    }

    /// Answers an `emit` or `annotate` at once, unless the turn is fenced:
    /// a prompted seat's request read after the fence gets no answer, as
    /// nothing about a turn is written after its fence.
    fn answer_host(&self, session: &Session, turn: &str, id: &str, answer: Result<(), HostError>) {
        if !self.shared.still_told() {
            return;
        }
        match answer {
            Ok(()) => session.write(&HarnessMessage::Ack { turn, id }),
            Err(error) => session.write(&HarnessMessage::HostError { turn, id, error: host_error(&error) }),
        }
    }

    /// Starts a call; its answer is written whenever it comes.
    fn invoke(&self, host: &RuntimeHost, id: String, mut call: ToolCall, options: InvokeOptions) {
        if let Some(recorded) = self.call_ids.as_ref().and_then(|ids| ids(&call.tool, &call.arguments)) {
            call.id = recorded;
        }
        let index = self.shared.released.replace(self.shared.released.get() + 1);
        let request = self.shared.request.borrow().clone();
        let declared = match (&self.steps, request) {
            // Steps are bounded by maxSteps (at most 1000), far inside f64's exact range.
            #[allow(clippy::cast_precision_loss)]
            (Some(steps), Some(request)) => steps(index, &request).map(|step| step as f64),
            _ => None,
        };
        let answer = host.invoke_tool(call, ToolInvocationOptions { step: options.step.or(declared) });
        let (seat, turn, shared) = (Rc::clone(&self.seat), self.shared.turn.borrow().clone(), Rc::clone(&self.shared));
        shared.in_flight.set(shared.in_flight.get() + 1);
        self.shared.background.spawn(async move {
            let answer = answer.await;
            shared.in_flight.set(shared.in_flight.get().saturating_sub(1));
            // After its report, or the fence, the runtime expects nothing
            // more of the turn: a late answer would only reach it amid its
            // next turn.
            if !shared.still_told() {
                return;
            }
            let Some(session) = seat.session() else { return };
            match &answer {
                Ok(result) => session.write(&HarnessMessage::ToolResult { turn: &turn, id: &id, result }),
                Err(error) => {
                    session.write(&HarnessMessage::HostError { turn: &turn, id: &id, error: host_error(error) })
                }
            }
        });
    }

    /// Writes `time` once the turn reaches `ms` after its origin.
    fn wake_at(&self, ms: u64) {
        let origin = self.shared.origin.get().unwrap_or_else(tokio::time::Instant::now);
        let (seat, turn, done) = (Rc::clone(&self.seat), self.shared.turn.borrow().clone(), self.shared.done.clone());
        let shared = Rc::clone(&self.shared);
        self.shared.background.spawn(async move {
            tokio::select! {
                () = tokio::time::sleep_until(origin + Duration::from_millis(ms)) => {
                    // A signal that fires at this very instant (the drain)
                    // is told first, as a runtime seated in process sees it
                    // fired when its own timer resumes it.
                    tokio::task::yield_now().await;
                    if !shared.still_told() {
                        return;
                    }
                    let now = tokio::time::Instant::now().saturating_duration_since(origin).as_millis();
                    if let Some(session) = seat.session() {
                        session.write(&HarnessMessage::Time { turn: &turn, now_ms: u64::try_from(now).unwrap_or(u64::MAX) });
                    }
                }
                () = done.aborted() => {}
            }
        });
    }

    /// Tells the runtime when the soft signal fires, while its turn runs
    /// (closing fires it too, and `closed` already says so).
    fn watch_draining(&self, draining: AbortSignal) {
        let (seat, turn, done) = (Rc::clone(&self.seat), self.shared.turn.borrow().clone(), self.shared.done.clone());
        let shared = Rc::clone(&self.shared);
        self.shared.background.spawn(async move {
            tokio::select! {
                () = draining.aborted() => {
                    if !shared.phase.get().wants_draining() {
                        return;
                    }
                    if let Some(session) = seat.session() {
                        session.write(&HarnessMessage::Draining { turn: &turn, reason: "turn_draining" });
                    }
                }
                () = done.aborted() => {}
            }
        });
    }

    /// The turn's ending for a violation: a failure with its own code.
    fn violated(breach: &Breach) -> Value {
        let mut details = Map::new();
        details.insert("violation".into(), json!(breach.message));
        let error = ProtocolError {
            code: breach.code.clone(),
            message: format!("the runtime broke {PROTOCOL}: {}", breach.message).chars().take(4096).collect(),
            retryable: Some(false),
            details: Some(details),
        };
        fail(error)
    }
}

/// Writes `abort` when the envelope stops the turn before the runtime ended it.
struct AbortOnDrop {
    runtime: ProcessRuntime,
    signal: AbortSignal,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if self.runtime.shared.advance(TurnPhase::end).has_ended() {
            return;
        }
        let turn = self.runtime.shared.turn.borrow().clone();
        if let Some(session) = self.runtime.seat.session() {
            let reason = self.signal.reason().map_or("turn_closed", |r| reason_code(&r));
            session.write(&HarnessMessage::Abort { turn: &turn, reason });
        }
    }
}

impl RuntimePlugin for ProcessRuntime {
    fn manifest(&self) -> RuntimeManifest {
        self.seat.manifest()
    }

    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>> {
        Box::pin(async move {
            *self.shared.turn.borrow_mut() = request.execution_id.clone();
            *self.shared.host.borrow_mut() = Some(host.clone());
            *self.shared.request.borrow_mut() = Some(Rc::clone(&request));
            self.shared.origin.set(Some(tokio::time::Instant::now()));
            let session = match self.fresh_session().await {
                Ok(session) => session,
                Err(breach) => {
                    self.shared.advance(TurnPhase::end);
                    let ending = Self::violated(&breach);
                    *self.shared.breach.borrow_mut() = Some(breach);
                    return Ok(ending);
                }
            };
            *self.shared.pin.borrow_mut() = session.share_cpu();
            self.shared.stderr_mark.set(session.stderr_mark());
            let abort = AbortOnDrop { runtime: self.clone(), signal: signal.clone() };
            let (sender, ending) = oneshot::channel();
            *self.shared.ending.borrow_mut() = Some(sender);
            *self.shared.script.borrow_mut() = self.script.as_ref().map(|build| build(&request));
            self.write_turn(&session, &host);
            self.watch_draining(host.draining());
            self.shared.background.spawn(self.clone().serve(session, host));
            let ending = ending.await;
            self.shared.advance(TurnPhase::end);
            drop(abort);
            match ending {
                Ok(Ending::Outcome(outcome)) => Ok(outcome),
                Ok(Ending::Thrown(message)) => Err(RuntimeFailure::message(message)),
                Ok(Ending::Broke(breach)) => Ok(Self::violated(&breach)),
                Err(_) => {
                    // The serving loop ended without an ending to hand over.
                    let exited = Violation::Exited { awaited: Awaited::Ending };
                    let stderr = self.seat.discard(self.shared.stderr_mark.get());
                    let breach = exited.breach(BreachPhase::Turn, None, &stderr);
                    let ending = Self::violated(&breach);
                    *self.shared.breach.borrow_mut() = Some(breach);
                    Ok(ending)
                }
            }
        })
    }
}

impl ProcessRuntime {
    /// The seat's session for a new turn. When a line an earlier turn's
    /// runtime wrote after the harness last looked (after its report, or
    /// after `closed` for a prompted seat) is waiting unread, or the
    /// process exited between turns, it is replaced: what it did fails no
    /// turn of another row.
    async fn fresh_session(&self) -> Result<Rc<Session>, Breach> {
        let session = self.seat.start().await?;
        if session.next_now().await.is_none() && !session.has_exited() {
            return Ok(session);
        }
        self.seat.discard(0);
        self.seat.start().await
    }
}

/// The refusal as the runtime is told it.
fn host_error(error: &HostError) -> HostErrorMessage {
    let (code, reason) = match error {
        HostError::Closed => ("closed", None),
        HostError::InvalidCall(_) => ("invalid_call", None),
        HostError::InvalidStep => ("invalid_step", None),
        HostError::InvalidEvent(_) => ("invalid_event", None),
        HostError::InvalidAnnotationKey(_) => ("invalid_annotation_key", None),
        HostError::InvalidAnnotationValue(_) => ("invalid_annotation_value", None),
        HostError::InvalidToolResult(_) => ("invalid_tool_result", None),
        HostError::Kernel(KernelError::AuditUnavailable(_)) => ("audit_unavailable", None),
        HostError::Kernel(_) => ("kernel_error", None),
        HostError::Aborted(reason) => ("aborted", Some(reason_code(reason).to_string())),
    };
    let message = match error {
        HostError::Kernel(KernelError::AuditUnavailable(inner)) => inner.to_string(),
        other => other.to_string(),
    };
    HostErrorMessage { code: code.to_string(), message, reason }
}

/// A signal's reason as the protocol spells it.
fn reason_code(reason: &AbortReason) -> &'static str {
    match reason {
        AbortReason::Timeout => "timeout",
        AbortReason::HostCancelled => "host_cancelled",
        AbortReason::TurnClosed => "turn_closed",
        AbortReason::Draining => "draining",
        AbortReason::AuditOutage(_) => "audit_unavailable",
    }
}
