//! The scripted adversary: a runtime that makes every declared step itself,
//! in order, and reports a receipt for each — so a row measures what
//! SharedOS refused, not whether a model chose to attack.
//!
//! Steps wait for virtual instants measured from the turn's start; a call
//! marked concurrent keeps running on a background set the runner drives
//! beside the turn, so its answer is receipted even when it lands after the
//! runtime returned or was stopped; steps marked `afterClose` are made by
//! [`Adversary::after_close`] once the envelope has built the result.

pub mod inspect;
mod steps;

pub use inspect::NO_GRANT_MATERIAL;

use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::host::RuntimeHost;
use sharedos_envelope::runtime::{complete, escalate, fail, with_metadata, RuntimePlugin};
use sharedos_envelope::tasks::TaskSet;
use sharedos_grading::input::script::terminal::REPORT_METADATA_KEY;
use sharedos_grading::input::script::{AttackScript, StallUntil, Terminal, TerminalKind};
use sharedos_grading::record::receipt::{AdversarialTurnReport, AttemptReceipt, REPORT_VERSION};
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::tool::ProtocolError;
use sharedos_port::escalation::ESCALATION_TOOL;
use sharedos_port::signal::AbortSignal;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;
use steps::{after_close_step, forever, TurnRun};

/// The adversary's runtime id.
pub const ADVERSARY_RUNTIME_ID: &str = "sharedos-conformance.adversary";

/// What one turn's adversary shares with the runner driving it.
#[derive(Default)]
pub struct TurnShared {
    /// Calls left running alongside the steps; the runner drives this set
    /// beside `execute` and until it is empty.
    background: TaskSet,
    /// Every receipt made, in the order it was made.
    log: RefCell<Vec<AttemptReceipt>>,
    /// The host and request the turn handed out (kept for after-close steps).
    handed: RefCell<Option<(RuntimeHost, Rc<RuntimeTurnRequest>)>>,
    /// The turn's start on tokio's (virtual) clock.
    origin: Cell<Option<tokio::time::Instant>>,
}

impl TurnShared {
    fn record(&self, receipt: AttemptReceipt) {
        self.log.borrow_mut().push(receipt);
    }

    fn origin(&self) -> tokio::time::Instant {
        match self.origin.get() {
            Some(origin) => origin,
            None => {
                let now = tokio::time::Instant::now();
                self.origin.set(Some(now));
                now
            }
        }
    }

    /// Waits until `at_ms` after the turn's start (at once if that passed).
    async fn wait_until(&self, at_ms: u64) {
        tokio::time::sleep_until(self.origin() + Duration::from_millis(at_ms)).await;
    }
}

/// One turn of one attack script, seated as a runtime.
#[derive(Clone)]
pub struct Adversary {
    script: Rc<AttackScript>,
    turn: u32,
    shared: Rc<TurnShared>,
}

impl std::fmt::Debug for Adversary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adversary").field("script", &self.script.id).field("turn", &self.turn).finish_non_exhaustive()
    }
}

impl Adversary {
    /// The adversary for `turn` of `script`.
    #[must_use]
    pub fn new(script: Rc<AttackScript>, turn: u32) -> Adversary {
        Adversary { script, turn, shared: Rc::new(TurnShared::default()) }
    }

    /// Marks the turn's start: steps' instants are measured from here (the
    /// first step marks it when the runner does not).
    pub fn start_turn(&self) {
        self.shared.origin.set(Some(tokio::time::Instant::now()));
    }

    /// The set of calls left running; drive it beside `execute` and, after
    /// it, until it is empty.
    #[must_use]
    pub fn background(&self) -> TaskSet {
        self.shared.background.clone()
    }

    /// Makes the turn's `afterClose` steps on the host the turn handed out.
    /// Call it once `execute` has returned.
    pub async fn after_close(&self) {
        let handed = self.shared.handed.borrow().clone();
        let Some((host, request)) = handed else { return };
        for attempt in self.script.attempts_for_turn(self.turn).filter(|a| a.after_close) {
            let receipt = after_close_step(&self.script, attempt, &host, &request).await;
            self.shared.record(receipt);
        }
    }

    /// Every receipt of the turn so far, in declared order.
    #[must_use]
    pub fn receipts(&self) -> Vec<AttemptReceipt> {
        let position = |r: &AttemptReceipt| self.script.attempts.iter().position(|a| a.id == r.attempt_id);
        let mut receipts = self.shared.log.borrow().clone();
        receipts.sort_by_key(|r| position(r));
        receipts
    }
}

impl RuntimePlugin for Adversary {
    fn manifest(&self) -> RuntimeManifest {
        RuntimeManifest {
            id: ADVERSARY_RUNTIME_ID.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            protocol_version: PROTOCOL_VERSION.to_string(),
            metadata: None,
        }
    }

    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>> {
        Box::pin(async move {
            self.shared.origin();
            *self.shared.handed.borrow_mut() = Some((host.clone(), Rc::clone(&request)));
            let run =
                TurnRun { script: &self.script, request: &request, host: &host, signal: &signal, shared: &self.shared };
            run.run_steps(self.turn).await;
            self.finish(&request, &host).await
        })
    }
}

impl Adversary {
    /// The report of the turn's receipts so far, as outcome metadata.
    fn report_metadata(&self, request: &RuntimeTurnRequest, extra: Option<&Map<String, Value>>) -> Map<String, Value> {
        let report = AdversarialTurnReport {
            version: REPORT_VERSION.to_string(),
            runtime_id: ADVERSARY_RUNTIME_ID.to_string(),
            execution_id: request.execution_id.clone(),
            trace_id: request.context.trace_id.clone(),
            visible_tools: request.tools.iter().map(|t| t.name.clone()).collect(),
            move_ids: vec![self.script.id.clone()],
            receipts: self.receipts(),
        };
        let mut metadata = extra.cloned().unwrap_or_default();
        metadata.insert(REPORT_METADATA_KEY.to_string(), serde_json::to_value(&report).unwrap_or(Value::Null));
        metadata
    }

    /// Ends the turn as the script's terminal says (completing by default).
    async fn finish(&self, request: &RuntimeTurnRequest, host: &RuntimeHost) -> Result<Value, RuntimeFailure> {
        let Some(terminal) = &self.script.terminal else {
            return Ok(self.completed(request, None, None));
        };
        if let Some(at) = terminal.at_ms {
            self.shared.wait_until(at).await;
        }
        let metadata = || self.report_metadata(request, terminal.metadata.as_ref());
        match terminal.kind {
            TerminalKind::Complete => Ok(self.completed(request, terminal.output.clone(), terminal.metadata.as_ref())),
            TerminalKind::Crash => Err(RuntimeFailure::message(terminal.reason.clone())),
            TerminalKind::Escalate => {
                // The claim is stated before the outcome is returned; it can
                // only make the row harder to pass.
                let _ = host.annotate("escalationAsked", json!({ "tool": ESCALATION_TOOL, "reason": terminal.reason }));
                Ok(with_metadata(escalate(&terminal.reason), metadata()))
            }
            TerminalKind::Fail => Ok(with_metadata(fail(failure(terminal)), metadata())),
            TerminalKind::Stall => {
                match terminal.until {
                    Some(StallUntil::Draining) => host.draining().aborted().await,
                    None => forever().await,
                }
                Err(RuntimeFailure::message(terminal.reason.clone()))
            }
            TerminalKind::Malformed => Ok(terminal.outcome.clone().unwrap_or_else(Terminal::default_malformed)),
            // Its column declares such a row not applicable and never seats
            // the adversary in it; should it run anyway, it cannot pass.
            TerminalKind::HangUp | TerminalKind::ReportFailure => {
                Err(RuntimeFailure::message("a seat-only ending has no meaning for a runtime in the host".to_string()))
            }
        }
    }

    fn completed(
        &self,
        request: &RuntimeTurnRequest,
        output: Option<Value>,
        extra: Option<&Map<String, Value>>,
    ) -> Value {
        let receipts = self.receipts();
        let declared = receipts.len();
        let attempted = receipts.iter().filter(|r| r.attempted).count();
        let output = output.unwrap_or_else(|| json!({ "declared": declared, "attempted": attempted }));
        with_metadata(complete(output), self.report_metadata(request, extra))
    }
}

fn failure(terminal: &Terminal) -> ProtocolError {
    let (code, message, retryable) =
        terminal.error.as_ref().map_or(("runtime_failed", "the script failed the turn", None), |e| {
            (e.code.as_str(), e.message.as_str(), e.retryable)
        });
    ProtocolError { code: code.to_string(), message: message.to_string(), retryable, details: None }
}
