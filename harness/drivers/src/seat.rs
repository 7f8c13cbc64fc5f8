//! The seat: what every driver does the same way (D12–D16).
//!
//! [`seat_text`] composes the instructions and the prompt the seat is told,
//! and hashes them before anything is sent. [`SeatCalls`] turns the seat's
//! tool calls into loop decisions: it recognises the escalation affordance,
//! stamps every call with the turn's trace and instant, and consults the
//! step-declaration policy per released call.

use crate::decision::{js_trim, AgentTurnDecision, MAX_REASON_UNITS};
use serde::Serialize;
use serde_json::{Map, Value};
use sharedos_model::access::Reach;
use sharedos_model::canonical::{tagged_hash, CanonicalError};
use sharedos_model::capability::{Capability, Scope};
use sharedos_model::execution::RuntimeTurnRequest;
use sharedos_model::tool::ToolCall;
use sharedos_port::escalation::ESCALATION_TOOL;
use std::fmt;
use std::rc::Rc;

/// The reason an escalation carries when the seat gave none that is usable.
pub const DEFAULT_ESCALATION_REASON: &str = "the turn asked for a human decision without saying what needs deciding";

/// Domain tag of the prompt hash: `SHA-256(tag || "\n" || JCS({instructions, prompt}))`,
/// lowercase hex, like every other hash the harness publishes.
pub const PROMPT_HASH_TAG: &str = "sharedos/prompt/v1";

/// Builds the prompt from the turn request.
pub type PromptFn = Rc<dyn Fn(&RuntimeTurnRequest) -> String>;

/// Builds the whole instructions from the turn request; `None` gives none.
pub type InstructionsFn = Rc<dyn Fn(&RuntimeTurnRequest) -> Option<String>>;

/// The step-declaration policy: `(release index, request)` to a declared
/// step, or `None` to let the loop use its own index.
pub type DeclareStep = Rc<dyn Fn(u64, &RuntimeTurnRequest) -> Option<u64>>;

/// How the instructions are composed.
#[derive(Clone)]
pub enum Instructions {
    /// Put before the reach description, separated by a blank line.
    Text(String),
    /// Replaces the whole composition.
    Compose(InstructionsFn),
}

impl fmt::Debug for Instructions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Instructions::Text(text) => f.debug_tuple("Text").field(text).finish(),
            Instructions::Compose(_) => f.write_str("Compose(..)"),
        }
    }
}

/// What a driver lets the host configure about the seat's words.
#[derive(Clone, Default)]
pub struct SeatTextOptions {
    /// The prompt; the message payload's text by default.
    pub prompt: Option<PromptFn>,
    /// The instructions; the reach description by default.
    pub instructions: Option<Instructions>,
}

impl fmt::Debug for SeatTextOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeatTextOptions")
            .field("prompt", &self.prompt.as_ref().map(|_| ".."))
            .field("instructions", &self.instructions)
            .finish()
    }
}

/// What the seat is told, and the hash of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatText {
    /// The instructions, when there are any.
    pub instructions: Option<String>,
    /// The prompt.
    pub prompt: String,
    /// `promptHash` over both.
    pub prompt_hash: String,
}

/// Composes and hashes the seat's words for one turn.
///
/// # Errors
/// Only if the words cannot be serialised as canonical JSON.
pub fn seat_text(options: &SeatTextOptions, request: &RuntimeTurnRequest) -> Result<SeatText, CanonicalError> {
    let instructions = match &options.instructions {
        Some(Instructions::Compose(compose)) => compose(request),
        Some(Instructions::Text(text)) => Some(format!("{text}\n\n{}", describe_reach(&request.context.reach))),
        None => Some(describe_reach(&request.context.reach)),
    };
    let prompt = match &options.prompt {
        Some(build) => build(request),
        None => default_prompt(&request.message.payload),
    };
    let prompt_hash = prompt_hash(instructions.as_deref(), &prompt)?;
    Ok(SeatText { instructions, prompt, prompt_hash })
}

/// The hash every seat states: identical words give identical hashes.
///
/// # Errors
/// Only if the words cannot be serialised as canonical JSON.
pub fn prompt_hash(instructions: Option<&str>, prompt: &str) -> Result<String, CanonicalError> {
    /// The hashed words, borrowed; `null` instructions when there are none.
    #[derive(Serialize)]
    struct Words<'a> {
        instructions: Option<&'a str>,
        prompt: &'a str,
    }
    tagged_hash(PROMPT_HASH_TAG, &Words { instructions, prompt })
}

/// The prompt a message payload gives: a string as is, else an object's
/// string `text`, else the payload's JSON text.
#[must_use]
pub fn default_prompt(payload: &Value) -> String {
    match payload {
        Value::String(text) => text.clone(),
        Value::Object(map) => match map.get("text") {
            Some(Value::String(text)) => text.clone(),
            _ => payload.to_string(),
        },
        _ => payload.to_string(),
    }
}

/// A deterministic description of the turn's reach, one line per reachable
/// resource in the kernel's order. It describes; it never grants.
#[must_use]
pub fn describe_reach(reach: &Reach) -> String {
    match reach {
        Reach::Unavailable { reason_code } => {
            format!("What this turn can reach could not be determined ({reason_code}).")
        }
        Reach::Computed { reach } if reach.is_empty() => "Nothing is reachable in this turn.".to_string(),
        Reach::Computed { reach } => {
            let mut text = String::from("This turn can reach (a description, not a grant):");
            for entry in reach {
                text.push_str("\n- ");
                push_reach_line(&mut text, entry);
            }
            text
        }
    }
}

/// `namespace /a/b[ and below][, owned by kind/id]: action, action`.
fn push_reach_line(text: &mut String, entry: &Capability) {
    let resource = &entry.resource;
    text.push_str(&resource.namespace);
    text.push_str(" /");
    text.push_str(&resource.path.join("/"));
    if entry.scope == Scope::Descendants {
        text.push_str(" and below");
    }
    if let Some(owner) = &resource.owner {
        text.push_str(", owned by ");
        text.push_str(owner.kind());
        text.push('/');
        text.push_str(owner.id());
    }
    text.push_str(": ");
    text.push_str(&entry.actions.join(", "));
}

/// The reason an escalation call carries (D14), or `None` when `tool` is
/// not the affordance. `arguments` is `None` when the seat's arguments were
/// not a JSON object at all.
#[must_use]
pub fn escalation_request(tool: &str, arguments: Option<&Map<String, Value>>) -> Option<String> {
    if tool != ESCALATION_TOOL {
        return None;
    }
    let reason = arguments.and_then(|args| args.get("reason")).and_then(Value::as_str).map(js_trim);
    Some(match reason {
        Some(text) if !text.is_empty() => cut_utf16(text, MAX_REASON_UNITS),
        _ => DEFAULT_ESCALATION_REASON.to_string(),
    })
}

/// The longest prefix of `text` within `max` UTF-16 units. Cutting between
/// characters never leaves half of a surrogate pair behind.
fn cut_utf16(text: &str, max: usize) -> String {
    let mut units = 0;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            break;
        }
        units += c.len_utf16();
        end = at + c.len_utf8();
    }
    text[..end].to_string()
}

/// One turn's tool-call bookkeeping, shared by every driver.
pub struct SeatCalls {
    request: Rc<RuntimeTurnRequest>,
    declare_step: Option<DeclareStep>,
    escalation_offered: bool,
    released: u64,
}

impl fmt::Debug for SeatCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeatCalls")
            .field("escalation_offered", &self.escalation_offered)
            .field("released", &self.released)
            .finish_non_exhaustive()
    }
}

impl SeatCalls {
    /// The bookkeeping of one turn.
    #[must_use]
    pub fn new(request: Rc<RuntimeTurnRequest>, declare_step: Option<DeclareStep>) -> SeatCalls {
        let escalation_offered = request.tools.iter().any(|tool| tool.name == ESCALATION_TOOL);
        SeatCalls { request, declare_step, escalation_offered, released: 0 }
    }

    /// Whether the turn's catalogue offers the escalation affordance.
    #[must_use]
    pub fn escalation_offered(&self) -> bool {
        self.escalation_offered
    }

    /// The escalation reason when the affordance is offered and `tool` names
    /// it; otherwise `None`, and the call is an ordinary one.
    #[must_use]
    pub fn escalation(&self, tool: &str, arguments: Option<&Map<String, Value>>) -> Option<String> {
        if self.escalation_offered {
            escalation_request(tool, arguments)
        } else {
            None
        }
    }

    /// A call stamped with the turn's trace and instant.
    #[must_use]
    pub fn tool_call(&self, id: &str, tool: &str, arguments: Map<String, Value>) -> ToolCall {
        ToolCall {
            id: id.to_string(),
            tool: tool.to_string(),
            arguments,
            trace_id: self.request.context.trace_id.clone(),
            requested_at: self.request.context.now.clone(),
        }
    }

    /// Releases `call` as a decision. The policy is consulted with the
    /// number of calls released before this one.
    pub fn release(&mut self, call: ToolCall) -> AgentTurnDecision {
        let index = self.released;
        self.released += 1;
        let step = self.declare_step.as_ref().and_then(|declare| declare(index, &self.request));
        AgentTurnDecision::ToolCall { call, step }
    }

    /// How many calls were released so far.
    #[must_use]
    pub fn released(&self) -> u64 {
        self.released
    }
}
