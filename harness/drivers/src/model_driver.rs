//! The model driver (D13, D15): seats a model that speaks tool calls.
//!
//! The driver names the catalogue on the model's wire, tells the model the
//! seat's words, and releases the model's calls one per `next`. A call to
//! the escalation affordance ends the turn before its arguments are even
//! checked; a call whose arguments are not a JSON object is answered with a
//! refusal the envelope never sees, up to a limit.

use crate::decision::{AgentTurnDecision, AgentTurnDriver, AgentTurnInput, AgentTurnSession, DriverError};
use crate::model_client::ModelClient;
use crate::model_wire::{ModelMessage, ModelReply, ModelRequest, ModelSettings, ModelTool, ModelToolCall};
use crate::seat::{seat_text, DeclareStep, SeatCalls, SeatTextOptions};
use crate::tool_names::ToolNameCodec;
use crate::vendor::ADAPTER_VERSION;
use crate::wire::{parse_tool_arguments, tool_result_text};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_port::signal::AbortSignal;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;

/// How many calls with unreadable arguments a turn tolerates, by default.
pub const DEFAULT_MAX_MALFORMED_CALLS: u32 = 8;

/// The model driver's default runtime id.
pub const MODEL_RUNTIME_ID: &str = "sharedos.model";

/// Reason codes the model driver ends a turn with.
pub mod codes {
    /// The client threw without an abort.
    pub const MODEL_CALL_FAILED: &str = "model_call_failed";
    /// The reply hit its token budget.
    pub const MODEL_OUTPUT_TRUNCATED: &str = "model_output_truncated";
    /// Too many calls with unreadable arguments.
    pub const MODEL_MALFORMED_CALL_LIMIT_EXCEEDED: &str = "model_malformed_call_limit_exceeded";
    /// The refusal a malformed call is answered with.
    pub const INVALID_TOOL_ARGUMENTS: &str = "invalid_tool_arguments";
}

/// How a model driver is built.
#[derive(Clone)]
pub struct ModelDriverOptions {
    /// The identity turns are filed under.
    pub manifest: RuntimeManifest,
    /// Who answers model calls.
    pub client: Rc<dyn ModelClient>,
    /// The model asked for (`requestedModel`).
    pub model: String,
    /// The provider stated as `modelProvider`.
    pub provider: Option<String>,
    /// Sampling settings; stated as `modelSettings` when given.
    pub settings: Option<ModelSettings>,
    /// The seat's words.
    pub seat: SeatTextOptions,
    /// Malformed calls tolerated before the turn fails.
    pub max_malformed_calls: u32,
    /// The step-declaration policy.
    pub declare_step: Option<DeclareStep>,
}

impl ModelDriverOptions {
    /// Options with every default: the reach-described seat, default
    /// settings, eight malformed calls, no declared steps.
    #[must_use]
    pub fn new(manifest: RuntimeManifest, client: Rc<dyn ModelClient>, model: &str) -> ModelDriverOptions {
        ModelDriverOptions {
            manifest,
            client,
            model: model.to_string(),
            provider: None,
            settings: None,
            seat: SeatTextOptions::default(),
            max_malformed_calls: DEFAULT_MAX_MALFORMED_CALLS,
            declare_step: None,
        }
    }
}

impl fmt::Debug for ModelDriverOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelDriverOptions")
            .field("manifest", &self.manifest)
            .field("model", &self.model)
            .field("provider", &self.provider)
            .field("settings", &self.settings)
            .field("seat", &self.seat)
            .field("max_malformed_calls", &self.max_malformed_calls)
            .finish_non_exhaustive()
    }
}

/// A model driver's default manifest, `sharedos.model`.
#[must_use]
pub fn model_manifest() -> RuntimeManifest {
    let mut metadata = Map::new();
    metadata.insert("package".into(), json!("@aicoo/sharedos-adapters"));
    metadata.insert("executionModel".into(), json!("bounded-driver-loop"));
    RuntimeManifest {
        id: MODEL_RUNTIME_ID.to_string(),
        version: ADAPTER_VERSION.to_string(),
        protocol_version: PROTOCOL_VERSION.to_string(),
        metadata: Some(metadata),
    }
}

/// Seats a model in the standard loop.
#[derive(Debug)]
pub struct ModelDriver {
    options: ModelDriverOptions,
}

impl ModelDriver {
    /// A driver with `options`.
    #[must_use]
    pub fn new(options: ModelDriverOptions) -> ModelDriver {
        ModelDriver { options }
    }

    fn open_session(&self, request: Rc<RuntimeTurnRequest>) -> Result<ModelSession, DriverError> {
        let codec = ToolNameCodec::new(&request.tools)?;
        let tools = request
            .tools
            .iter()
            .map(|tool| ModelTool {
                name: codec.encode(&tool.name),
                description: tool.description.clone(),
                parameters: tool.input_schema.clone(),
            })
            .collect();
        let text = seat_text(&self.options.seat, &request)?;
        let mut messages = Vec::new();
        if let Some(content) = text.instructions {
            messages.push(ModelMessage::System { content });
        }
        messages.push(ModelMessage::User { content: text.prompt });
        Ok(ModelSession {
            options: self.options.clone(),
            codec,
            tools,
            messages,
            pending: VecDeque::new(),
            seat: SeatCalls::new(request, self.options.declare_step.clone()),
            prompt_hash: text.prompt_hash,
            stats: ReplyStats::default(),
        })
    }
}

impl AgentTurnDriver for ModelDriver {
    fn manifest(&self) -> RuntimeManifest {
        self.options.manifest.clone()
    }

    fn open(
        &self,
        request: Rc<RuntimeTurnRequest>,
        _signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn AgentTurnSession>, DriverError>> {
        let opened = self.open_session(request).map(|session| Box::new(session) as Box<dyn AgentTurnSession>);
        Box::pin(async move { opened })
    }
}

/// What the turn's replies said, for the result metadata.
#[derive(Debug, Default)]
struct ReplyStats {
    served_model: Option<String>,
    finish_reason: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    malformed: u32,
}

impl ReplyStats {
    fn observe(&mut self, reply: &ModelReply) {
        if let Some(model) = &reply.model {
            self.served_model = Some(model.clone());
        }
        self.finish_reason.clone_from(&reply.finish_reason);
        if let Some(usage) = reply.usage {
            self.input_tokens = Some(self.input_tokens.unwrap_or(0).saturating_add(usage.input_tokens));
            self.output_tokens = Some(self.output_tokens.unwrap_or(0).saturating_add(usage.output_tokens));
        }
    }
}

/// One turn of the model driver.
struct ModelSession {
    options: ModelDriverOptions,
    codec: ToolNameCodec,
    tools: Vec<ModelTool>,
    messages: Vec<ModelMessage>,
    pending: VecDeque<ModelToolCall>,
    seat: SeatCalls,
    prompt_hash: String,
    stats: ReplyStats,
}

impl ModelSession {
    /// The facts every ending states; absent keys mean "not stated".
    fn metadata(&self) -> Map<String, Value> {
        let mut map = Map::new();
        let served = self.stats.served_model.clone().unwrap_or_else(|| self.options.model.clone());
        map.insert("model".into(), Value::String(served));
        if let Some(provider) = &self.options.provider {
            map.insert("modelProvider".into(), Value::String(provider.clone()));
        }
        map.insert("requestedModel".into(), Value::String(self.options.model.clone()));
        if let Some(settings) = &self.options.settings {
            map.insert("modelSettings".into(), serde_json::to_value(settings).unwrap_or(Value::Null));
        }
        map.insert("malformedToolCalls".into(), json!(self.stats.malformed));
        if let Some(reason) = &self.stats.finish_reason {
            map.insert("finishReason".into(), Value::String(reason.clone()));
        }
        if let Some(tokens) = self.stats.input_tokens {
            map.insert("inputTokens".into(), json!(tokens));
        }
        if let Some(tokens) = self.stats.output_tokens {
            map.insert("outputTokens".into(), json!(tokens));
        }
        map
    }

    fn fail(&self, code: &str, message: &str) -> Value {
        AgentTurnDecision::fail(code, message, Some(self.metadata())).to_value()
    }

    /// Releases the next pending call, answering malformed ones on the way;
    /// `None` once nothing is pending.
    fn release_pending(&mut self) -> Option<Value> {
        while let Some(pending) = self.pending.pop_front() {
            let tool = self.codec.decode(&pending.name);
            let arguments = parse_tool_arguments(&pending.arguments);
            if let Some(reason) = self.seat.escalation(&tool, arguments.as_ref()) {
                self.pending.clear();
                return Some(AgentTurnDecision::Escalate { reason, metadata: Some(self.metadata()) }.to_value());
            }
            let Some(arguments) = arguments else {
                self.stats.malformed = self.stats.malformed.saturating_add(1);
                if self.stats.malformed > self.options.max_malformed_calls {
                    let message = "The model made more calls with unreadable arguments than the turn tolerates.";
                    return Some(self.fail(codes::MODEL_MALFORMED_CALL_LIMIT_EXCEEDED, message));
                }
                let refusal = json!({
                    "status": "failed",
                    "error": {"code": codes::INVALID_TOOL_ARGUMENTS, "message": "The call's arguments are not a JSON object."},
                });
                self.messages.push(ModelMessage::Tool { tool_call_id: pending.id, content: refusal.to_string() });
                continue;
            };
            let call = self.seat.tool_call(&pending.id, &tool, arguments);
            return Some(self.seat.release(call).to_value());
        }
        None
    }

    async fn decide(&mut self, input: AgentTurnInput, signal: AbortSignal) -> Result<Value, DriverError> {
        if let AgentTurnInput::ToolResult { result } = input {
            let content = tool_result_text(&result);
            self.messages.push(ModelMessage::Tool { tool_call_id: result.call_id, content });
        }
        loop {
            if let Some(decision) = self.release_pending() {
                return Ok(decision);
            }
            let request = ModelRequest {
                model: self.options.model.clone(),
                messages: self.messages.clone(),
                tools: self.tools.clone(),
                settings: self.options.settings.unwrap_or_default(),
            };
            let reply = match self.options.client.complete(request, signal.clone()).await {
                Ok(reply) => reply,
                Err(_) if signal.is_aborted() => {
                    return Err(DriverError::Aborted(
                        signal.reason().unwrap_or(sharedos_port::signal::AbortReason::TurnClosed),
                    ));
                }
                Err(_) => return Ok(self.fail(codes::MODEL_CALL_FAILED, "The model call failed.")),
            };
            self.stats.observe(&reply);
            if reply.is_truncated() {
                return Ok(
                    self.fail(codes::MODEL_OUTPUT_TRUNCATED, "The model's reply was cut short by its token budget.")
                );
            }
            self.messages
                .push(ModelMessage::Assistant { content: reply.content.clone(), tool_calls: reply.tool_calls.clone() });
            if reply.tool_calls.is_empty() {
                let output = json!({ "text": reply.content });
                return Ok(AgentTurnDecision::Complete { output, metadata: Some(self.metadata()) }.to_value());
            }
            self.pending.extend(reply.tool_calls);
        }
    }
}

impl AgentTurnSession for ModelSession {
    fn prompt_hash(&self) -> Option<String> {
        Some(self.prompt_hash.clone())
    }

    fn next(&mut self, input: AgentTurnInput, signal: AbortSignal) -> LocalBoxFuture<'_, Result<Value, DriverError>> {
        Box::pin(self.decide(input, signal))
    }
}
