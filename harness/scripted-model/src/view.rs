//! What the scripted model reads from one request, whichever API carried it.

use crate::naming::PresentedName;
use sharedos_conformance_metadata::witness::Returned;

/// Whether a request belongs to the agent's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The agent's loop: the play advances.
    Loop,
    /// Anything else a CLI asks a model (a title, a summary, a probe):
    /// answered with text, the play untouched.
    Side,
}

/// One request, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestView {
    /// Loop or side request.
    pub role: Role,
    /// How many calls this model has asked for in the conversation.
    pub asked: usize,
    /// Every tool name the request offers the model.
    pub offered: Vec<PresentedName>,
    /// The results of this model's calls that the conversation carries.
    pub returned: Vec<Returned>,
}

impl RequestView {
    /// The view of a request offering `offered`, whose conversation holds
    /// this model's calls `asked` (by index, a call repeated counted once)
    /// and their results `returned`. A request offering no tool is a side
    /// request: the agent's loop always offers the served ones.
    #[must_use]
    pub fn read(offered: Vec<PresentedName>, mut asked: Vec<usize>, returned: Vec<Returned>) -> RequestView {
        asked.sort_unstable();
        asked.dedup();
        let role = if offered.is_empty() { Role::Side } else { Role::Loop };
        RequestView { role, asked: asked.len(), offered, returned }
    }
}

/// How a reply is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wire {
    /// The HTTP status.
    pub status: u16,
    /// The content type.
    pub content_type: &'static str,
    /// The body, in the order written.
    pub chunks: Vec<String>,
    /// What happens after the last chunk.
    pub then: Then,
}

/// How a response ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// The body ends.
    End,
    /// The connection is dropped, the body unfinished.
    Drop,
    /// The body stays open until the turn ends.
    Hold,
}

/// One server-sent event.
#[must_use]
pub fn sse(event: &str, data: &serde_json::Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}
