//! The eval-harness driver (D17–D23): seats a vendor's wire format in the
//! standard loop, over a transport (a recorded transcript, or a live CLI).
//!
//! A session reads frames, has the protocol interpret them into steps, and
//! returns one decision per `next`. Several calls in one frame are released
//! over successive `next`s; prose is kept across the whole session so a
//! terminal frame without text still has output; within one `next` at most
//! `max_ignored_frames + 1` frames are read.

use crate::decision::{
    AgentTurnDecision, AgentTurnDriver, AgentTurnInput, AgentTurnSession, DriverError, SessionOutcome,
};
use crate::frame::{HarnessStep, HarnessTurnRequest};
use crate::protocol::HarnessProtocol;
use crate::seat::{seat_text, DeclareStep, SeatCalls, SeatTextOptions};
use crate::transport::{HarnessChannel, HarnessTransport};
use futures::future::LocalBoxFuture;
use serde_json::{json, Value};
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::tool::ToolDefinition;
use sharedos_port::signal::AbortSignal;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// How many frames one `next` may read without a decision, by default.
pub const DEFAULT_MAX_IGNORED_FRAMES: u64 = 512;

/// Reason codes the eval driver ends a turn with.
pub mod codes {
    /// The channel ended before the harness decided the turn.
    pub const HARNESS_ENDED_WITHOUT_OUTCOME: &str = "harness_ended_without_outcome";
    /// One `next` read more frames than the driver tolerates.
    pub const HARNESS_FRAME_LIMIT_EXCEEDED: &str = "harness_frame_limit_exceeded";
}

/// Renders a catalogue in a protocol's tool shape (see
/// [`EvalHarnessDriverOptions::render_tools`]).
pub type ToolRenderer = Rc<dyn Fn(&dyn HarnessProtocol, &[Arc<ToolDefinition>]) -> Arc<Value>>;

/// How an eval-harness driver is built.
#[derive(Clone)]
pub struct EvalHarnessDriverOptions {
    /// The identity turns are filed under (the vendor's manifest, usually).
    pub manifest: RuntimeManifest,
    /// The vendor's wire format.
    pub protocol: Rc<dyn HarnessProtocol>,
    /// How the harness is reached.
    pub transport: Rc<dyn HarnessTransport>,
    /// The seat's words.
    pub seat: SeatTextOptions,
    /// Frames one `next` may read without a decision; positive. `None`
    /// means [`DEFAULT_MAX_IGNORED_FRAMES`].
    pub max_ignored_frames: Option<u64>,
    /// The step-declaration policy.
    pub declare_step: Option<DeclareStep>,
    /// Renders each turn's catalogue; `None` asks the protocol's
    /// `describe_tools` every turn. A host that runs many turns over the
    /// same catalogue can hand in one that remembers its renderings.
    pub render_tools: Option<ToolRenderer>,
}

impl EvalHarnessDriverOptions {
    /// Options with every default: the reach-described seat, 512 ignored
    /// frames, no declared steps.
    #[must_use]
    pub fn new(
        manifest: RuntimeManifest,
        protocol: Rc<dyn HarnessProtocol>,
        transport: Rc<dyn HarnessTransport>,
    ) -> EvalHarnessDriverOptions {
        EvalHarnessDriverOptions {
            manifest,
            protocol,
            transport,
            seat: SeatTextOptions::default(),
            max_ignored_frames: None,
            declare_step: None,
            render_tools: None,
        }
    }
}

impl fmt::Debug for EvalHarnessDriverOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EvalHarnessDriverOptions")
            .field("manifest", &self.manifest)
            .field("protocol", &self.protocol.id())
            .field("seat", &self.seat)
            .field("max_ignored_frames", &self.max_ignored_frames)
            .field("render_tools", &self.render_tools.is_some())
            .finish_non_exhaustive()
    }
}

/// The driver could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalDriverError {
    /// `maxIgnoredFrames` was zero.
    #[error("accept maxIgnoredFrames: expected a positive integer")]
    InvalidMaxIgnoredFrames,
}

/// Seats a vendor harness in the standard loop.
pub struct EvalHarnessDriver {
    options: EvalHarnessDriverOptions,
    max_ignored_frames: u64,
}

impl fmt::Debug for EvalHarnessDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EvalHarnessDriver")
            .field("options", &self.options)
            .field("max_ignored_frames", &self.max_ignored_frames)
            .finish()
    }
}

impl EvalHarnessDriver {
    /// A driver with `options`.
    ///
    /// # Errors
    /// When `max_ignored_frames` is zero.
    pub fn new(options: EvalHarnessDriverOptions) -> Result<EvalHarnessDriver, EvalDriverError> {
        let max_ignored_frames = options.max_ignored_frames.unwrap_or(DEFAULT_MAX_IGNORED_FRAMES);
        if max_ignored_frames == 0 {
            return Err(EvalDriverError::InvalidMaxIgnoredFrames);
        }
        Ok(EvalHarnessDriver { options, max_ignored_frames })
    }

    /// How many frames one `next` may read without a decision.
    #[must_use]
    pub fn max_ignored_frames(&self) -> u64 {
        self.max_ignored_frames
    }

    async fn open_session(
        &self,
        request: Rc<RuntimeTurnRequest>,
        signal: AbortSignal,
    ) -> Result<Box<dyn AgentTurnSession>, DriverError> {
        // The words are hashed before the transport opens: opening is where
        // the harness is first told anything.
        let text = seat_text(&self.options.seat, &request)?;
        let turn = HarnessTurnRequest {
            execution_id: request.execution_id.clone(),
            prompt: text.prompt,
            instructions: text.instructions,
            tools: match &self.options.render_tools {
                Some(render) => render(self.options.protocol.as_ref(), &request.tools),
                None => Arc::new(self.options.protocol.describe_tools(&request.tools)),
            },
            context: request.context.clone(),
            metadata: request.metadata.clone(),
        };
        let channel = self.options.transport.open(turn, signal).await?;
        Ok(Box::new(EvalSession {
            channel,
            protocol: Rc::clone(&self.options.protocol),
            max_ignored_frames: self.max_ignored_frames,
            seat: SeatCalls::new(request, self.options.declare_step.clone()),
            prompt_hash: text.prompt_hash,
            pending: VecDeque::new(),
            messages: Vec::new(),
        }))
    }
}

impl AgentTurnDriver for EvalHarnessDriver {
    fn manifest(&self) -> RuntimeManifest {
        self.options.manifest.clone()
    }

    fn open(
        &self,
        request: Rc<RuntimeTurnRequest>,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn AgentTurnSession>, DriverError>> {
        Box::pin(self.open_session(request, signal))
    }
}

/// One turn of the eval driver.
struct EvalSession {
    channel: Box<dyn HarnessChannel>,
    protocol: Rc<dyn HarnessProtocol>,
    max_ignored_frames: u64,
    seat: SeatCalls,
    prompt_hash: String,
    /// Steps read but not yet consumed.
    pending: VecDeque<HarnessStep>,
    /// Prose seen this session, kept across `next`s.
    messages: Vec<String>,
}

impl EvalSession {
    /// Consumes pending steps up to the first that decides something.
    fn drain(&mut self) -> Option<AgentTurnDecision> {
        while let Some(step) = self.pending.pop_front() {
            match step {
                HarnessStep::Message { text } => self.messages.push(text),
                HarnessStep::Failed { error } => return Some(AgentTurnDecision::Fail { error, metadata: None }),
                HarnessStep::Complete { output, metadata } => {
                    let output = output.unwrap_or_else(|| json!({ "text": self.messages.join("\n") }));
                    return Some(AgentTurnDecision::Complete { output, metadata });
                }
                HarnessStep::ToolCall { call_id, tool, arguments } => {
                    if let Some(reason) = self.seat.escalation(&tool, Some(&arguments)) {
                        return Some(AgentTurnDecision::Escalate { reason, metadata: None });
                    }
                    let call = self.seat.tool_call(&call_id, &tool, arguments);
                    return Some(self.seat.release(call));
                }
            }
        }
        None
    }

    async fn decide(&mut self, input: AgentTurnInput, signal: AbortSignal) -> Result<Value, DriverError> {
        if let AgentTurnInput::ToolResult { result } = input {
            let frame = self.protocol.encode_tool_result(&result);
            self.channel.write(frame, signal.clone()).await?;
        }
        for _ in 0..=self.max_ignored_frames {
            if let Some(decision) = self.drain() {
                return Ok(decision.to_value());
            }
            let Some(frame) = self.channel.read(signal.clone()).await? else {
                let message = "The harness stopped sending frames before it decided the turn.";
                return Ok(AgentTurnDecision::fail(codes::HARNESS_ENDED_WITHOUT_OUTCOME, message, None).to_value());
            };
            self.pending.extend(self.protocol.interpret(&frame));
        }
        let message = "The harness sent more frames without a decision than the driver tolerates.";
        Ok(AgentTurnDecision::fail(codes::HARNESS_FRAME_LIMIT_EXCEEDED, message, None).to_value())
    }
}

impl AgentTurnSession for EvalSession {
    fn prompt_hash(&self) -> Option<String> {
        Some(self.prompt_hash.clone())
    }

    fn next(&mut self, input: AgentTurnInput, signal: AbortSignal) -> LocalBoxFuture<'_, Result<Value, DriverError>> {
        Box::pin(self.decide(input, signal))
    }

    fn close(
        &mut self,
        _outcome: SessionOutcome,
        _signal: AbortSignal,
    ) -> Option<LocalBoxFuture<'_, Result<(), DriverError>>> {
        Some(Box::pin(async move { self.channel.close().await.map_err(DriverError::from) }))
    }
}
