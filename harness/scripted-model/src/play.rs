//! What the scripted model says in one turn: the row's calls, one per
//! reply, in declared order, then its ending. The same play the
//! `model-scripted` column's driver is given, told over a vendor's API.

use serde_json::{Map, Value};

/// One call the model asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayCall {
    /// The canonical tool name (`files.read`); the name the CLI shows its
    /// model is found in each request.
    pub tool: String,
    /// The arguments.
    pub arguments: Map<String, Value>,
    /// Milliseconds from the turn's start before the reply is sent, if timed.
    pub at_ms: Option<u64>,
    /// `tool` is a name of the CLI's own (`Bash`, `exec_command`), asked
    /// for as it is rather than as the CLI presents a served tool.
    pub own_tool: bool,
}

/// How the model ends the turn once its calls are made. Each ending a
/// model cannot say in prose has one wire form
/// (`docs/vendors/grade-a-cli-offline.md`, *Endings*).
#[derive(Debug, Clone, PartialEq)]
pub enum PlayEnding {
    /// Final text.
    Complete {
        /// Milliseconds from the turn's start, if timed.
        at_ms: Option<u64>,
    },
    /// The escalation tool's call, then final text once it is answered.
    Escalate(PlayCall),
    /// An HTTP 400 with the API's error body: the CLI's failed turn.
    Failure,
    /// The response stream dropped mid-message.
    HangUp,
    /// A response held open until the turn ends.
    Stall,
    /// The API's max-tokens stop reason.
    CutShort,
}

/// One turn's play.
#[derive(Debug, Clone, PartialEq)]
pub struct Play {
    /// The calls, in order.
    pub calls: Vec<PlayCall>,
    /// The ending.
    pub ending: PlayEnding,
    /// Secrets of the turn, by label, that no request should ever carry
    /// to the model: one that does shows the CLI read or ran something
    /// outside the envelope.
    pub secrets: Vec<(String, String)>,
}

/// The text of a final reply.
pub const FINAL_TEXT: &str = "done";
/// The message of the API error that fails a turn.
pub const FAILURE_MESSAGE: &str = "the scripted model failed this turn";

/// What the model says next, given how many calls it has already asked for
/// in the conversation the request carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply<'a> {
    /// Ask for this call; its index among the turn's asks.
    Call(usize, &'a PlayCall),
    /// Say the final text.
    Final,
    /// Answer the API's error.
    Failure,
    /// Drop the stream mid-message.
    HangUp,
    /// Hold the response open.
    Stall,
    /// Stop at the token budget.
    CutShort,
}

impl Play {
    /// The reply after `asked` calls: the conversation, not a counter, says
    /// where the turn is, so a CLI's retry of a request is answered alike.
    #[must_use]
    pub fn reply(&self, asked: usize) -> Reply<'_> {
        if let Some(call) = self.calls.get(asked) {
            return Reply::Call(asked, call);
        }
        match &self.ending {
            PlayEnding::Escalate(ask) if asked == self.calls.len() => Reply::Call(asked, ask),
            PlayEnding::Complete { .. } | PlayEnding::Escalate(_) => Reply::Final,
            PlayEnding::Failure => Reply::Failure,
            PlayEnding::HangUp => Reply::HangUp,
            PlayEnding::Stall => Reply::Stall,
            PlayEnding::CutShort => Reply::CutShort,
        }
    }

    /// When the reply after `asked` calls may be sent, in milliseconds from
    /// the turn's start.
    #[must_use]
    pub fn due_ms(&self, asked: usize) -> Option<u64> {
        match self.reply(asked) {
            Reply::Call(_, call) => call.at_ms,
            Reply::Final => match self.ending {
                PlayEnding::Complete { at_ms } => at_ms,
                _ => None,
            },
            _ => None,
        }
    }

    /// Every tool the play may ask for, in order.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        let ask = match &self.ending {
            PlayEnding::Escalate(ask) => Some(ask),
            _ => None,
        };
        self.calls.iter().chain(ask).map(|call| call.tool.as_str())
    }
}

/// The id the model gives its `index`th call: the conversation carries it
/// back with the CLI's result.
#[must_use]
pub fn call_id(prefix: &str, index: usize) -> String {
    format!("{prefix}sharedos_{index}")
}

/// The index of a call id this model gave, if it is one.
#[must_use]
pub fn call_index(prefix: &str, id: &str) -> Option<usize> {
    id.strip_prefix(prefix)?.strip_prefix("sharedos_")?.parse().ok()
}
