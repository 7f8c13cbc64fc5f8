//! What the model driver sends a model and reads back, independent of any
//! provider, and the chat-completions rendering of both.
//!
//! Names on this wire are already wire names (dots replaced, see
//! [`crate::tool_names`]); arguments travel as the model wrote them, a JSON
//! text the driver parses itself.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sharedos_model::tool::SharedObject;

/// Default `max_tokens` of a chat-completions request.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The finish reason that marks a reply cut short by its token budget.
pub const FINISH_LENGTH: &str = "length";

/// The finish reason of a reply that ends the turn in words.
pub const FINISH_STOP: &str = "stop";

/// One tool as the model is shown it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelTool {
    /// The wire name.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// The tool's input schema, shared with its definition.
    pub parameters: SharedObject,
}

/// One tool call as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelToolCall {
    /// The model's call id.
    pub id: String,
    /// The wire name.
    pub name: String,
    /// The arguments' JSON text, unparsed.
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ModelMessage {
    /// The instructions.
    System {
        /// The text.
        content: String,
    },
    /// The prompt.
    User {
        /// The text.
        content: String,
    },
    /// A model reply, with the calls it made.
    Assistant {
        /// The prose.
        content: String,
        /// The calls, in order.
        #[serde(rename = "toolCalls", default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ModelToolCall>,
    },
    /// The answer to one call: the JSON text of the result body.
    Tool {
        /// The call it answers.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The body.
        content: String,
    },
}

/// Sampling settings stated on every request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    /// The reply's token budget.
    pub max_tokens: u32,
    /// Sampling temperature.
    pub temperature: f64,
}

impl Default for ModelSettings {
    fn default() -> ModelSettings {
        ModelSettings { max_tokens: DEFAULT_MAX_TOKENS, temperature: 0.0 }
    }
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The model asked for.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<ModelMessage>,
    /// The catalogue in wire names.
    pub tools: Vec<ModelTool>,
    /// Sampling settings.
    pub settings: ModelSettings,
}

/// Token counts of one reply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// One reply of the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelReply {
    /// The model that served the reply, when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The prose ("" when none).
    #[serde(default)]
    pub content: String,
    /// The calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    /// Why the model stopped (`stop`, `tool_calls`, `length`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Token counts, when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ModelUsage>,
}

impl ModelReply {
    /// Whether the reply was cut short by its token budget.
    #[must_use]
    pub fn is_truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some(FINISH_LENGTH)
    }
}

/// A provider's body that cannot be read as a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("read the model's reply: {0}")]
pub struct UnreadableReply(pub String);

/// The chat-completions request body. `tools` and `tool_choice: "auto"` are
/// left out for an empty catalogue, which providers refuse as an empty list.
#[must_use]
pub fn chat_completions_body(request: &ModelRequest) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(chat_message).collect();
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
            })
        })
        .collect();
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "max_tokens": request.settings.max_tokens,
        "temperature": request.settings.temperature,
    });
    if let Value::Object(map) = &mut body {
        if !tools.is_empty() {
            map.insert("tools".into(), Value::Array(tools));
            map.insert("tool_choice".into(), json!("auto"));
        }
    }
    body
}

fn chat_message(message: &ModelMessage) -> Value {
    match message {
        ModelMessage::System { content } => json!({"role": "system", "content": content}),
        ModelMessage::User { content } => json!({"role": "user", "content": content}),
        ModelMessage::Tool { tool_call_id, content } => {
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
        ModelMessage::Assistant { content, tool_calls } => {
            let mut message = json!({"role": "assistant", "content": content});
            if !tool_calls.is_empty() {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
                message["tool_calls"] = Value::Array(calls);
            }
            message
        }
    }
}

/// Reads a chat-completions response body: `choices[0]` (content, tool
/// calls, finish reason), the served `model`, and `usage`.
///
/// # Errors
/// When the body has no first choice, or a call lacks a string id, name or
/// arguments. The provider's own error text is never carried.
pub fn parse_chat_completions_reply(body: &Value) -> Result<ModelReply, UnreadableReply> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| UnreadableReply("the body has no first choice".into()))?;
    let message = choice.get("message").ok_or_else(|| UnreadableReply("the first choice has no message".into()))?;
    let content = message.get("content").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut tool_calls = Vec::new();
    for call in message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        let function = call.get("function");
        let field = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
        match (
            field(call.get("id")),
            field(function.and_then(|f| f.get("name"))),
            field(function.and_then(|f| f.get("arguments"))),
        ) {
            (Some(id), Some(name), Some(arguments)) => tool_calls.push(ModelToolCall { id, name, arguments }),
            _ => return Err(UnreadableReply("a tool call lacks a string id, name or arguments".into())),
        }
    }
    let usage = body.get("usage").map(|usage| ModelUsage {
        input_tokens: usage.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: usage.get("completion_tokens").and_then(Value::as_u64).unwrap_or(0),
    });
    Ok(ModelReply {
        model: body.get("model").and_then(Value::as_str).map(str::to_string),
        content,
        tool_calls,
        finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(str::to_string),
        usage,
    })
}
