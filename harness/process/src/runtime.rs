//! A runtime seated from outside: [`ProcessRuntime`] speaks
//! `sharedos-runtime/1` with a [`Session`] for one turn, mapping every
//! request onto the five host members and every answer back.
//!
//! The calls a runtime leaves in flight, its `wait` timers and the
//! draining watcher run on [`ProcessRuntime::background`], which the
//! runner drives beside the turn and after it, so an answer that lands
//! after the runtime returned (or was stopped) still reaches it. After the
//! turn the runner calls [`ProcessRuntime::finish`]: the runtime is told
//! `closed`, makes any after-close requests, and (a scripted seat) sends
//! its receipts.

use crate::message::{HarnessMessage, HostErrorMessage, InvokeOptions, RuntimeMessage};
use crate::seat::ProcessSeat;
use crate::violation::Violation;
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

/// What one turn's runtime shares with the runner driving it.
#[derive(Default)]
struct TurnShared {
    turn: RefCell<String>,
    host: RefCell<Option<RuntimeHost>>,
    background: TaskSet,
    ids: RefCell<BTreeSet<String>>,
    origin: Cell<Option<tokio::time::Instant>>,
    ended: Cell<bool>,
    done: AbortSignal,
    violation: RefCell<Option<Violation>>,
    receipts: RefCell<Option<Vec<Map<String, Value>>>>,
}

/// One turn of a seat's runtime.
#[derive(Clone)]
pub struct ProcessRuntime {
    seat: Rc<ProcessSeat>,
    script: Option<Rc<Value>>,
    shared: Rc<TurnShared>,
}

impl std::fmt::Debug for ProcessRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessRuntime").field("seat", &self.seat).finish_non_exhaustive()
    }
}

/// When a serving loop hands control back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Until {
    /// At the turn's outcome (or throw).
    Outcome,
    /// At the runtime's report, after `closed`.
    Report,
}

/// How a serving loop ended.
enum Served {
    Outcome(Value),
    Thrown(String),
    Report(Vec<Map<String, Value>>),
    Violation(Violation),
}

impl ProcessRuntime {
    /// The runtime of `seat` for one turn; a scripted seat passes the
    /// turn's prepared `script`.
    #[must_use]
    pub fn new(seat: Rc<ProcessSeat>, script: Option<Value>) -> ProcessRuntime {
        ProcessRuntime { seat, script: script.map(Rc::new), shared: Rc::default() }
    }

    /// What the runner drives beside the turn and after it.
    #[must_use]
    pub fn background(&self) -> TaskSet {
        self.shared.background.clone()
    }

    /// Ends the turn with the runtime: tells it `closed`, serves its
    /// after-close requests and (a scripted seat) waits for its report.
    pub async fn finish(&self) {
        let turn = self.shared.turn.borrow().clone();
        let session = self.seat.session();
        if let (Some(session), true) = (&session, self.shared.violation.borrow().is_none() && !turn.is_empty()) {
            session.write(&HarnessMessage::Closed { turn: &turn });
            if self.script.is_some() {
                let served = self.serve(Until::Report);
                tokio::pin!(served);
                let served = loop {
                    tokio::select! {
                        biased;
                        served = &mut served => break served,
                        () = self.shared.background.drive() => {}
                    }
                };
                match served {
                    Served::Report(receipts) => *self.shared.receipts.borrow_mut() = Some(receipts),
                    Served::Violation(violation) => self.broke(violation),
                    Served::Outcome(_) | Served::Thrown(_) => {}
                }
            }
            session.idle();
        }
        self.shared.done.abort(AbortReason::TurnClosed);
        self.shared.background.drive_to_completion().await;
        if let Some(session) = self.seat.session() {
            session.idle();
        }
    }

    /// The receipts a scripted seat reported after the turn.
    #[must_use]
    pub fn receipts(&self) -> Option<Vec<Map<String, Value>>> {
        self.shared.receipts.borrow().clone()
    }

    /// The violation that ended the turn, if one did.
    #[must_use]
    pub fn violation(&self) -> Option<Violation> {
        self.shared.violation.borrow().clone()
    }

    fn broke(&self, violation: Violation) {
        *self.shared.violation.borrow_mut() = Some(violation);
        self.seat.discard();
    }

    /// Reads and answers the runtime's messages until `until`.
    async fn serve(&self, until: Until) -> Served {
        let (Some(session), Some(host)) = (self.seat.session(), self.shared.host.borrow().clone()) else {
            return Served::Violation(Violation::Exited { stderr: String::new() });
        };
        loop {
            let message = match session.next().await {
                Ok(message) => message,
                Err(violation) => return Served::Violation(violation),
            };
            let turn = self.shared.turn.borrow().clone();
            match message.turn() {
                Some(named) if named != turn => {
                    return Served::Violation(Violation::WrongTurn { named: named.to_string(), running: turn })
                }
                None => return Served::Violation(Violation::OutOfOrder { kind: "ready".into() }),
                Some(_) => {}
            }
            match message {
                RuntimeMessage::InvokeTool { id, call, options, .. } => {
                    if let Err(violation) = self.claim(&id) {
                        return Served::Violation(violation);
                    }
                    self.invoke(&host, id, call, options);
                }
                RuntimeMessage::Emit { id, event, .. } => {
                    if let Err(violation) = self.claim(&id) {
                        return Served::Violation(violation);
                    }
                    let answer = host.emit(RuntimeEvent { kind: event.kind, data: event.data });
                    self.answer_host(&id, answer);
                }
                RuntimeMessage::Annotate { id, key, value, .. } => {
                    if let Err(violation) = self.claim(&id) {
                        return Served::Violation(violation);
                    }
                    let answer = host.annotate(&key, value);
                    self.answer_host(&id, answer);
                }
                RuntimeMessage::Wait { until_ms, .. } => {
                    session.idle();
                    if let Some(ms) = until_ms {
                        self.wake_at(ms);
                    }
                }
                RuntimeMessage::Outcome { outcome, .. } if until == Until::Outcome => {
                    return Served::Outcome(outcome);
                }
                RuntimeMessage::Thrown { error, .. } if until == Until::Outcome => {
                    return Served::Thrown(error.message);
                }
                RuntimeMessage::Report { receipts, .. } if until == Until::Report => {
                    return Served::Report(receipts);
                }
                RuntimeMessage::Outcome { .. } | RuntimeMessage::Thrown { .. } => {
                    return Served::Violation(Violation::AfterOutcome { kind: "a second ending".into() })
                }
                RuntimeMessage::Report { .. } => {
                    return Served::Violation(Violation::OutOfOrder { kind: "report".into() })
                }
                RuntimeMessage::Ready { .. } => {
                    return Served::Violation(Violation::OutOfOrder { kind: "ready".into() })
                }
            }
        }
    }

    fn claim(&self, id: &str) -> Result<(), Violation> {
        if self.shared.ids.borrow_mut().insert(id.to_string()) {
            Ok(())
        } else {
            Err(Violation::DuplicateId { id: id.to_string() })
        }
    }

    /// Starts a call; its answer is written whenever it comes.
    fn invoke(&self, host: &RuntimeHost, id: String, call: ToolCall, options: InvokeOptions) {
        let answer = host.invoke_tool(call, ToolInvocationOptions { step: options.step });
        let (seat, turn) = (Rc::clone(&self.seat), self.shared.turn.borrow().clone());
        self.shared.background.spawn(async move {
            let answer = answer.await;
            let Some(session) = seat.session() else { return };
            match &answer {
                Ok(result) => session.write(&HarnessMessage::ToolResult { turn: &turn, id: &id, result }),
                Err(error) => {
                    session.write(&HarnessMessage::HostError { turn: &turn, id: &id, error: host_error(error) })
                }
            }
        });
    }

    fn answer_host(&self, id: &str, answer: Result<(), HostError>) {
        let Some(session) = self.seat.session() else { return };
        let turn = self.shared.turn.borrow().clone();
        match answer {
            Ok(()) => session.write(&HarnessMessage::Ack { turn: &turn, id }),
            Err(error) => session.write(&HarnessMessage::HostError { turn: &turn, id, error: host_error(&error) }),
        }
    }

    /// Writes `time` once the turn reaches `ms` after its origin.
    fn wake_at(&self, ms: u64) {
        let origin = self.shared.origin.get().unwrap_or_else(tokio::time::Instant::now);
        let (seat, turn, done) = (Rc::clone(&self.seat), self.shared.turn.borrow().clone(), self.shared.done.clone());
        self.shared.background.spawn(async move {
            tokio::select! {
                () = tokio::time::sleep_until(origin + Duration::from_millis(ms)) => {
                    let now = tokio::time::Instant::now().saturating_duration_since(origin).as_millis();
                    if let Some(session) = seat.session() {
                        session.write(&HarnessMessage::Time { turn: &turn, now_ms: u64::try_from(now).unwrap_or(u64::MAX) });
                    }
                }
                () = done.aborted() => {}
            }
        });
    }

    /// Tells the runtime when the soft signal fires.
    fn watch_draining(&self, draining: AbortSignal) {
        let (seat, turn, done) = (Rc::clone(&self.seat), self.shared.turn.borrow().clone(), self.shared.done.clone());
        self.shared.background.spawn(async move {
            tokio::select! {
                () = draining.aborted() => {
                    if let Some(session) = seat.session() {
                        session.write(&HarnessMessage::Draining { turn: &turn, reason: "turn_draining" });
                    }
                }
                () = done.aborted() => {}
            }
        });
    }

    /// The turn's ending for a violation: a failure with its own code.
    fn violated(&self, violation: Violation) -> Value {
        let code = violation.code();
        let mut details = Map::new();
        details.insert("violation".into(), json!(violation.to_string()));
        let error = ProtocolError {
            code: code.to_string(),
            message: format!("the runtime broke sharedos-runtime/1: {violation}").chars().take(4096).collect(),
            retryable: Some(false),
            details: Some(details),
        };
        self.broke(violation);
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
        if self.runtime.shared.ended.get() {
            return;
        }
        self.runtime.shared.ended.set(true);
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
            self.shared.origin.set(Some(tokio::time::Instant::now()));
            let session = match self.seat.start().await {
                Ok(session) => session,
                Err(violation) => {
                    self.shared.ended.set(true);
                    return Ok(self.violated(violation));
                }
            };
            let _abort = AbortOnDrop { runtime: self.clone(), signal: signal.clone() };
            session.write(&HarnessMessage::Turn {
                turn: &request.execution_id,
                request: &request,
                limits: host.limits(),
                script: self.script.as_deref(),
            });
            self.watch_draining(host.draining());
            let served = self.serve(Until::Outcome).await;
            self.shared.ended.set(true);
            match served {
                Served::Outcome(outcome) => Ok(outcome),
                Served::Thrown(message) => Err(RuntimeFailure::message(message)),
                Served::Violation(violation) => Ok(self.violated(violation)),
                Served::Report(_) => Ok(self.violated(Violation::OutOfOrder { kind: "report".into() })),
            }
        })
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
