//! Codex: protocol id `openai.responses.function-calling`.
//!
//! Codex is read in two shapes. The Responses shape (`function_call`,
//! `message`, `response.completed`, `response.failed`) is what our own
//! [`CodexWriter`] produces for the scripted columns and what a transport
//! speaking the API directly would carry. The CLI event stream is what
//! `codex exec --json` writes on stdout (`thread.started`, `turn.started`,
//! `item.*`, `turn.completed`, `turn.failed`, top-level `error`).
//!
//! [`CodexProtocol::interpret`](crate::protocol::HarnessProtocol::interpret)
//! reads one frame of either shape without memory. [`CodexLiveReader`] reads
//! a whole CLI stream with the state the real stream needs: which line is
//! terminal, which agent message is the answer, which calls were already
//! reported.
//!
//! # Reading a live stream
//!
//! - Only `turn.completed` and `turn.failed` end the turn. A stream that
//!   stops before either ends with
//!   [`LiveOutcome::NoOutcome`](crate::live::LiveOutcome::NoOutcome)
//!   (an interrupted turn). JSON objects after the terminal count as
//!   [`IgnoredKind::AfterTerminal`](crate::live::IgnoredKind::AfterTerminal);
//!   other lines keep their own kind (blank, not JSON, not an object)
//!   wherever they are.
//! - The answer of a completed turn is `{"text": <last agent message>}`
//!   (`""` when the turn wrote none).
//! - A top-level `error` line is a notice (often "Reconnecting... n/m"); it
//!   is counted irrelevant, and its message is kept: a later `turn.failed`
//!   whose own message is blank reports it.
//! - `mcp_tool_call` and `command_execution` items are calls the CLI runs
//!   itself. Each is reported once, as a `tool_call` step with origin
//!   [`CallOrigin::RanByCli`](crate::live::CallOrigin::RanByCli), on the
//!   first `item.started` or `item.completed` line that names its item id;
//!   reporting on the start keeps calls of an interrupted turn visible.
//!   An item without an id is reported on `item.completed` only, since a
//!   start and a completion without ids cannot be matched.
//!   The call id is the item id. An MCP call's tool is the item's `tool`,
//!   untouched, with its `arguments` object (absent or null giving `{}`);
//!   a shell command is reported as tool `command_execution` with arguments
//!   `{"command": <command>}`. A call whose item ends `status: "failed"`
//!   (an MCP `isError` result in `result`, a timeout or an approval the CLI
//!   refused in `error.message`) is still one observed call; a call the CLI
//!   answers "unsupported call" (a tool it does not offer) writes no item
//!   at all, so it is not seen (codex-cli 0.169.0, captured:
//!   `tests/streams/codex/real-0.169.0`).
//! - Other items (`reasoning`, `file_change`, `web_search`, `todo_list`,
//!   `plan`, `collab_tool_call`, the non-fatal `error` item, such as the
//!   "Model metadata for `…` not found" notice that opens every turn run on
//!   a model outside the CLI's catalogue) and `item.updated` are irrelevant.
//! - The terminal line also yields a step: `complete` with the answer (and
//!   the `usage` object as metadata when present), or `failed`.
//!
//! # Departures from SharedOS's reading
//!
//! SharedOS's codec (rules D29–D31) was written without a captured
//! CLI session; the CLI's own event definitions and public captures of real
//! runs show a different stream. Where they differ this codec follows the
//! real stream:
//!
//! 1. **A top-level `error` frame is not a failure.** D30 reads
//!    `{type:"error"}` as a retryable `failed`. The CLI writes that same
//!    shape for transient retry notices in runs that then succeed, so a
//!    reader that fails on it ends good turns early. `interpret` gives `[]`
//!    for it; `response.failed` still fails as D30 says.
//! 2. **Old item naming is accepted.** Older CLI builds wrote
//!    `item.item_type: "assistant_message"` where newer ones write
//!    `item.type: "agent_message"`. Both read as prose (in `interpret` and in
//!    the live reader), and `item_type` is read for the other item kinds
//!    too; D31 knows only the new naming.
//! 3. **The answer is the last agent message** (live reader). D31 reads
//!    `turn.completed` as a bare `complete` and leaves the driver to join
//!    all prose read so far; the CLI's answer is its final agent message, and earlier messages
//!    are progress notes. `interpret` stays stateless and still yields a bare
//!    `complete`, so on that path the joining is the driver's rule.
//! 4. **CLI-run calls are observations** (live reader). D31 ignores
//!    `mcp_tool_call` and `command_execution` items; the live reader reports
//!    them as calls the CLI ran, so they can be compared with what the
//!    envelope mediated. `interpret` still yields `[]` for them: its
//!    `tool_call` steps are requests the driver answers, and these calls
//!    have already run.
//! 5. **A blank vendor code is no code.** A `response.failed` whose
//!    `error.code` is empty or whitespace reports `harness_failed`, since an
//!    empty code is not a valid reason code.

mod live;
mod protocol;
mod writer;

pub use live::CodexLiveReader;
pub use protocol::CodexProtocol;
pub use writer::CodexWriter;

/// The protocol id both the reader and the writer state.
pub const PROTOCOL_ID: &str = "openai.responses.function-calling";
