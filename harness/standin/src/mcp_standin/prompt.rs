//! The prompt a prompted seat is given: numbered calls, then how to end
//! (`harness/conformance/src/run/transcript.rs`, `seat_prompt`).

use serde_json::{Map, Value};

/// One call the prompt lists.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptedCall {
    pub tool: String,
    pub arguments: Map<String, Value>,
}

/// How the prompt says to end.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptEnding {
    Complete,
    Escalate(PromptedCall),
    Stall,
    HangUp,
    Failure,
}

/// The calls and the ending a prompt asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptedTurn {
    pub calls: Vec<PromptedCall>,
    pub ending: PromptEnding,
}

/// "Call `tool` with {json}" read from the rest of a line.
fn call_in(text: &str) -> Option<PromptedCall> {
    let rest = text.strip_prefix("Call `").or_else(|| text.strip_prefix("call `"))?;
    let (tool, rest) = rest.split_once('`')?;
    let arguments = serde_json::from_str(rest.strip_prefix(" with ")?).ok()?;
    Some(PromptedCall { tool: tool.to_string(), arguments })
}

impl PromptedTurn {
    /// Reads `prompt`; a line it does not know is skipped, and without an
    /// ending line the turn completes.
    pub fn read(prompt: &str) -> PromptedTurn {
        let mut calls = Vec::new();
        let mut ending = PromptEnding::Complete;
        for line in prompt.lines() {
            if let Some((number, rest)) = line.split_once(". ") {
                if number.chars().all(|c| c.is_ascii_digit()) {
                    calls.extend(call_in(rest));
                    continue;
                }
            }
            if let Some(ask) = line.strip_prefix("Then ").and_then(call_in) {
                ending = PromptEnding::Escalate(ask);
            } else if line.starts_with("Then wait") {
                ending = PromptEnding::Stall;
            } else if line.starts_with("Then stop") {
                ending = PromptEnding::HangUp;
            } else if line.starts_with("Then report") {
                ending = PromptEnding::Failure;
            }
        }
        PromptedTurn { calls, ending }
    }
}
