//! The standard loop (D1–D11): a runtime that asks a driver for one decision
//! at a time, forwards every tool call to the host, and owns the one budget
//! that ends a turn, the step budget.
//!
//! A loop reports its driver's manifest, so a turn is filed under the
//! harness that sat in the seat; [`StandardLoop::unbranded`] reports the
//! loop's own identity, `sharedos.standard`, instead.

use crate::decision::{
    AgentTurnDecision, AgentTurnDriver, AgentTurnInput, AgentTurnSession, DriverError, SessionOutcome,
};
use crate::vendor::ADAPTER_VERSION;
use futures::future::LocalBoxFuture;
use futures::FutureExt;
use serde_json::{json, Map, Value};
use sharedos_envelope::error::HostError;
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_envelope::runtime::{outcome_value, RuntimePlugin};
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnOutcome, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::tool::ProtocolError;
use sharedos_port::escalation::ESCALATION_TOOL;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::fmt;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

/// The loop's own runtime id.
pub const STANDARD_RUNTIME_ID: &str = "sharedos.standard";

/// The annotation key of the prompt hash.
pub const PROMPT_HASH_ANNOTATION: &str = "promptHash";

/// The annotation key stating that the seat asked to escalate; its value is
/// `{tool: "sharedos.escalate", reason}`, the shape the execution record's
/// `escalationAsked` carries.
pub const ESCALATION_ASKED_ANNOTATION: &str = "escalationAsked";

/// How long a session's `close` may take, by default.
pub const DEFAULT_CLOSE_TIMEOUT_MS: u64 = 1000;

/// What the loop caught, as `on_turn_error` receives it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoopError {
    /// The driver or its session threw.
    #[error(transparent)]
    Driver(DriverError),
    /// A host call was rejected.
    #[error(transparent)]
    Host(HostError),
    /// The turn's signal fired while the loop waited on the driver.
    #[error("wait for the driver before the turn stopped ({0:?})")]
    Aborted(AbortReason),
    /// The host started draining; the loop takes nothing new.
    #[error("continue the turn: the host is draining it")]
    Draining,
}

impl From<DriverError> for LoopError {
    fn from(error: DriverError) -> LoopError {
        match error {
            DriverError::Aborted(reason) => LoopError::Aborted(reason),
            other => LoopError::Driver(other),
        }
    }
}

impl From<HostError> for LoopError {
    fn from(error: HostError) -> LoopError {
        LoopError::Host(error)
    }
}

impl LoopError {
    fn into_failure(self) -> RuntimeFailure {
        match self {
            LoopError::Host(error) => RuntimeFailure::Host(error),
            other => RuntimeFailure::Message(other.to_string()),
        }
    }
}

/// Receives a contained driver throw; observational only.
pub type TurnErrorSink = Rc<dyn Fn(&LoopError)>;

/// How a loop is built.
#[derive(Clone)]
pub struct StandardLoopOptions {
    /// How long `close` may take before it is abandoned (positive).
    pub close_timeout_ms: u64,
    /// Receives what the loop contains as `driver_failed`.
    pub on_turn_error: Option<TurnErrorSink>,
}

impl Default for StandardLoopOptions {
    fn default() -> StandardLoopOptions {
        StandardLoopOptions { close_timeout_ms: DEFAULT_CLOSE_TIMEOUT_MS, on_turn_error: None }
    }
}

impl fmt::Debug for StandardLoopOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StandardLoopOptions")
            .field("close_timeout_ms", &self.close_timeout_ms)
            .field("on_turn_error", &self.on_turn_error.is_some())
            .finish()
    }
}

/// The loop could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopConstructionError {
    /// `closeTimeoutMs` was zero.
    #[error("accept closeTimeoutMs: expected a positive integer")]
    InvalidCloseTimeout,
}

/// The standard loop seated with driver `D`.
pub struct StandardLoop<D: AgentTurnDriver> {
    driver: D,
    options: StandardLoopOptions,
    manifest: Option<RuntimeManifest>,
}

impl<D: AgentTurnDriver> fmt::Debug for StandardLoop<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StandardLoop").field("options", &self.options).finish_non_exhaustive()
    }
}

/// The loop's own manifest, `sharedos.standard`.
#[must_use]
pub fn standard_manifest() -> RuntimeManifest {
    let mut metadata = Map::new();
    metadata.insert("package".into(), json!("@aicoo/sharedos-runtime"));
    metadata.insert("executionModel".into(), json!("bounded-driver-loop"));
    RuntimeManifest {
        id: STANDARD_RUNTIME_ID.to_string(),
        version: ADAPTER_VERSION.to_string(),
        protocol_version: PROTOCOL_VERSION.to_string(),
        metadata: Some(metadata),
    }
}

impl<D: AgentTurnDriver> StandardLoop<D> {
    /// A loop seating `driver`, filed under the driver's manifest.
    ///
    /// # Errors
    /// When `close_timeout_ms` is zero.
    pub fn new(driver: D, options: StandardLoopOptions) -> Result<StandardLoop<D>, LoopConstructionError> {
        if options.close_timeout_ms == 0 {
            return Err(LoopConstructionError::InvalidCloseTimeout);
        }
        Ok(StandardLoop { driver, options, manifest: None })
    }

    /// A loop seating `driver`, filed under `sharedos.standard`.
    ///
    /// # Errors
    /// When `close_timeout_ms` is zero.
    pub fn unbranded(driver: D, options: StandardLoopOptions) -> Result<StandardLoop<D>, LoopConstructionError> {
        let mut seated = StandardLoop::new(driver, options)?;
        seated.manifest = Some(standard_manifest());
        Ok(seated)
    }

    /// The seated driver.
    #[must_use]
    pub fn driver(&self) -> &D {
        &self.driver
    }

    async fn turn(
        &self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> Result<Value, RuntimeFailure> {
        let mut slot = SessionSlot::default();
        let attempt = self.drive(request, &host, &signal, &mut slot).await;
        let (answer, outcome) = match attempt {
            Ok(ending) => (Ok(outcome_value(&ending.outcome)), ending.close),
            Err(thrown) if signal.is_aborted() || host.draining().is_aborted() => {
                (Err(thrown.into_failure()), SessionOutcome::Cancelled)
            }
            Err(thrown) => {
                if let Some(sink) = &self.options.on_turn_error {
                    sink(&thrown);
                }
                let mut error =
                    ProtocolError::new(ReasonCode::DriverFailed.as_str(), "The driver failed while running the turn.");
                error.retryable = Some(true);
                (Ok(outcome_value(&RuntimeTurnOutcome::Fail { error, metadata: None })), SessionOutcome::Failed)
            }
        };
        slot.close(outcome, self.options.close_timeout_ms).await;
        answer
    }

    async fn drive(
        &self,
        request: Rc<RuntimeTurnRequest>,
        host: &RuntimeHost,
        signal: &AbortSignal,
        slot: &mut SessionSlot,
    ) -> Result<Ending, LoopError> {
        let opened = race(self.driver.open(request, signal.clone()), signal).await??;
        let session = slot.hold(opened);
        if let Some(hash) = session.prompt_hash() {
            host.annotate(PROMPT_HASH_ANNOTATION, Value::String(hash))?;
        }
        let draining = host.draining();
        let mut input = AgentTurnInput::Start;
        for step in 0..u64::from(host.limits().max_steps) {
            if draining.is_aborted() {
                return Err(LoopError::Draining);
            }
            let raw = race(session.next(input, signal.clone()), signal).await??;
            let Ok(decision) = AgentTurnDecision::parse(&raw) else {
                return Ok(Ending::failed(ReasonCode::InvalidDriverDecision, INVALID_DECISION));
            };
            let (call, declared) = match decision {
                AgentTurnDecision::ToolCall { call, step } => (call, step),
                AgentTurnDecision::Escalate { reason, metadata } => {
                    host.annotate(ESCALATION_ASKED_ANNOTATION, json!({ "tool": ESCALATION_TOOL, "reason": reason }))?;
                    let outcome = RuntimeTurnOutcome::Escalate { reason, metadata };
                    return Ok(Ending { outcome, close: SessionOutcome::Escalated });
                }
                terminal => return Ok(Ending::terminal(terminal)),
            };
            if declared.is_some_and(|declared| declared < step) {
                return Ok(Ending::failed(ReasonCode::InvalidDriverDecision, STEP_BEHIND));
            }
            let result = host.invoke_tool(call, ToolInvocationOptions::at_step(declared.unwrap_or(step))).await?;
            if draining.is_aborted() {
                return Err(LoopError::Draining);
            }
            input = AgentTurnInput::ToolResult { result };
        }
        Ok(Ending::failed(ReasonCode::StepLimitExceeded, STEPS_SPENT))
    }
}

const INVALID_DECISION: &str = "The driver returned a decision that does not match the contract.";
const STEP_BEHIND: &str = "The driver declared a step behind the loop's own position.";
const STEPS_SPENT: &str = "The turn used its whole step budget without finishing.";

impl<D: AgentTurnDriver> RuntimePlugin for StandardLoop<D> {
    fn manifest(&self) -> RuntimeManifest {
        self.manifest.clone().unwrap_or_else(|| self.driver.manifest())
    }

    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>> {
        Box::pin(self.turn(request, host, signal))
    }
}

/// How the loop ends a turn it did not throw out of.
struct Ending {
    outcome: RuntimeTurnOutcome,
    close: SessionOutcome,
}

impl Ending {
    fn failed(code: ReasonCode, message: &str) -> Ending {
        let error = ProtocolError::new(code.as_str(), message);
        Ending { outcome: RuntimeTurnOutcome::Fail { error, metadata: None }, close: SessionOutcome::Failed }
    }

    fn terminal(decision: AgentTurnDecision) -> Ending {
        let close = match decision {
            AgentTurnDecision::Complete { .. } => SessionOutcome::Succeeded,
            AgentTurnDecision::Escalate { .. } => SessionOutcome::Escalated,
            _ => SessionOutcome::Failed,
        };
        match decision.into_outcome() {
            Some(outcome) => Ending { outcome, close },
            None => Ending::failed(ReasonCode::InvalidDriverDecision, INVALID_DECISION),
        }
    }
}

/// Awaits `future` unless `signal` fires first (already fired counts).
async fn race<T>(future: impl Future<Output = T>, signal: &AbortSignal) -> Result<T, LoopError> {
    tokio::select! {
        biased;
        () = signal.aborted() => Err(LoopError::Aborted(signal.reason().unwrap_or(AbortReason::TurnClosed))),
        value = future => Ok(value),
    }
}

/// The turn's session, closed exactly once.
///
/// The envelope stops awaiting a runtime the moment the turn's hard signal
/// fires, which drops the loop's future before its own close runs. The slot
/// then closes the session as `cancelled` from `Drop`: the close is started
/// and given one poll, which is all a dropped turn can give it.
#[derive(Default)]
struct SessionSlot {
    session: Option<Box<dyn AgentTurnSession>>,
}

impl SessionSlot {
    fn hold(&mut self, session: Box<dyn AgentTurnSession>) -> &mut dyn AgentTurnSession {
        self.session.insert(session).as_mut()
    }

    async fn close(&mut self, outcome: SessionOutcome, timeout_ms: u64) {
        let Some(mut session) = self.session.take() else { return };
        let deadline = AbortSignal::new();
        let Some(closing) = session.close(outcome, deadline.clone()) else { return };
        tokio::select! {
            _ = closing => {}
            () = tokio::time::sleep(Duration::from_millis(timeout_ms)) => deadline.abort(AbortReason::Timeout),
        }
    }
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        if let Some(mut session) = self.session.take() {
            if let Some(closing) = session.close(SessionOutcome::Cancelled, AbortSignal::new()) {
                let _ = closing.now_or_never();
            }
        }
    }
}
