//! Claude Code: protocol id `anthropic.messages.stream-json`.
//!
//! Claude Code writes Anthropic content blocks inside the envelope of
//! `claude -p --output-format stream-json --verbose`: `system`, `assistant`,
//! `user`, `stream_event`, `rate_limit_event`, and one terminal `result`.
//! Our own [`ClaudeCodeWriter`] writes `assistant` and `result` frames of the
//! same envelope for the scripted columns.
//!
//! [`ClaudeCodeProtocol::interpret`](crate::protocol::HarnessProtocol::interpret)
//! reads one frame without memory; [`ClaudeCodeLiveReader`] reads a whole
//! stream and keeps what a single frame cannot know: the synthetic frame's
//! error code, the tool-use ids already reported, the last prose, and
//! whether the terminal `result` has arrived.
//!
//! # Reading a live stream
//!
//! - Any frame whose `parent_tool_use_id` is present and not null was
//!   produced inside a sub-agent and counts as
//!   [`IgnoredKind::OtherSession`](crate::live::IgnoredKind::OtherSession).
//! - An `assistant` frame yields its text blocks as prose (blank ones
//!   skipped) and its `tool_use` blocks as calls with origin
//!   [`CallOrigin::RanByCli`](crate::live::CallOrigin::RanByCli). Frames may
//!   carry one block each while sharing one `message.id`, or several blocks
//!   at once; both read the same. A tool-use id is reported once even if a
//!   later frame repeats its block. A frame that yields nothing (a thinking
//!   block alone) is irrelevant.
//! - The synthetic assistant frame of an API or account failure
//!   (`message.model: "<synthetic>"`, or any top-level `error`) gives no
//!   prose; its `api_error`, else its `error`, is kept to code the failure
//!   the `result` reports.
//! - `system`, `user`, `stream_event` and `rate_limit_event` are irrelevant.
//! - The first `result` ends the turn; every later JSON object counts as
//!   [`IgnoredKind::AfterTerminal`](crate::live::IgnoredKind::AfterTerminal),
//!   while other lines keep their own kind (blank, not JSON, not an object).
//!   A completion's answer is `{"text": result}`, or the last prose when the
//!   frame has no `result`. The terminal line also yields a `complete` step
//!   (with the `usage` object as metadata when present) or a `failed` step.
//!
//! # Reading a `result`
//!
//! A `result` fails when `is_error` is true or its subtype starts with
//! `error` (`error`, `error_max_turns`, `error_during_execution`,
//! `error_max_budget_usd`, `error_max_structured_output_retries`, and any
//! later `error_*`). The code is the subtype when it names one other than
//! `success`; otherwise the result's `api_error`, else its `error`, else the
//! code of the synthetic frame before it, else
//! `api_error_<api_error_status>`, else a `terminal_reason` other than
//! `completed`, else `harness_failed`. `unknown`, the CLI's word for an
//! error it could not class, names nothing and is skipped wherever it
//! appears. The message is the strings of `errors[]` joined with `"; "`,
//! else a non-blank `result`, else a fixed sentence. Failures are
//! retryable. Optional fields that are `null` read as absent, as the CLI
//! writes `null` for fields it has nothing for.
//!
//! What Claude Code 2.1.328 writes, captured against a scripted model
//! (`tests/streams/claude-code/real-2.1.328`): an HTTP 400 ends
//! `subtype:"success", is_error:true, api_error_status:400,
//! terminal_reason:"api_error"` after a synthetic frame whose `error` is
//! `unknown` (code `api_error_400`); a dropped stream ends with
//! `api_error:"connection_failed"` after a synthetic frame whose `error` is
//! `server_error` (code `connection_failed`); a reply cut short by its
//! token limit ends with `api_error:"max_output_tokens"`; `--max-turns`
//! ends `error_max_turns`; SIGINT ends `error_during_execution`
//! (`terminal_reason:"aborted_streaming"`); SIGTERM writes no `result`.
//!
//! # Departures from SharedOS's reading
//!
//! SharedOS's codec (rule D33) was written without a captured CLI
//! session; Anthropic's documentation of headless runs and public captures
//! show a different stream. Where they differ this codec follows the real
//! stream:
//!
//! 1. **`success` with `is_error: true` is coded from the error.** D33 codes
//!    a failure with its subtype, so an API failure (which the CLI reports as
//!    `subtype: "success"`, `is_error: true`) would fail with code `success`.
//!    The code is derived instead (see above), e.g. `connection_failed`,
//!    `rate_limit` or `api_error_400`, and is never `success`.
//! 2. **Error subtypes fail without `is_error`.** D33 treats
//!    `error_during_execution` without `is_error` as a completion; builds
//!    differ in whether they set the flag, and the subtype alone says the
//!    turn did not succeed.
//! 3. **An error subtype's message comes from `errors[]`.** D33 reads only
//!    `result`, which error subtypes do not carry, so every such failure had
//!    the fixed sentence.
//! 4. **Sub-agent frames give nothing.** D33 reads every assistant frame;
//!    frames with a non-null `parent_tool_use_id` belong to a sub-agent (the
//!    Task tool), and their calls and prose are not the turn's. `interpret`
//!    gives `[]` for them.
//! 5. **The synthetic frame gives no prose.** D33 would read the synthetic
//!    frame's "API Error: …" text as assistant prose, which the driver would
//!    then offer as the turn's output. `interpret` gives `[]` for it.
//! 6. **Live calls are observations** (live reader). A `tool_use` block on a
//!    real stream is a call the CLI runs itself; the live reader reports it
//!    with origin `ran_by_cli`. `interpret` still reads it as a `tool_call`,
//!    since on the scripted path our writer's frames are requests.

mod live;
mod protocol;
mod writer;

pub use live::ClaudeCodeLiveReader;
pub use protocol::ClaudeCodeProtocol;
pub use writer::ClaudeCodeWriter;

/// The protocol id both the reader and the writer state.
pub const PROTOCOL_ID: &str = "anthropic.messages.stream-json";
