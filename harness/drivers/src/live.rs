//! Reading what a real vendor CLI writes on stdout.
//!
//! On a live stream every tool call is an observation: the CLI runs its
//! calls itself, and none of the four protocols has an input for a result.
//! A [`LiveStreamReader`] therefore reports calls with [`CallOrigin`], keeps
//! to the turn's own session, tolerates known version drift, and counts
//! every line it does not use by [`IgnoredKind`].

use crate::frame::HarnessStep;
use serde::Serialize;
use std::collections::BTreeMap;

/// Who runs a call seen on a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOrigin {
    /// The CLI already runs it; it is observed, never answered.
    RanByCli,
    /// The harness asks the driver to run it (transcript frames, or a
    /// harness speaking SharedOS's eval protocol).
    AskedOfDriver,
}

/// Why a line was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IgnoredKind {
    /// Empty or whitespace only.
    Blank,
    /// Not JSON (including a truncated last line).
    NotJson,
    /// JSON, but not an object.
    NotObject,
    /// An object of a known type that carries nothing for the turn
    /// (progress, reasoning, usage, retry notices).
    Irrelevant,
    /// An object of a type this reader does not know.
    Unknown,
    /// A known type whose shape does not match what the vendor writes.
    Malformed,
    /// Belongs to another session or to a sub-agent.
    OtherSession,
    /// Arrived after the turn's terminal line.
    AfterTerminal,
    /// Longer than the line cap: skipped without being held.
    Oversized,
}

impl IgnoredKind {
    /// Every kind, in declaration order.
    pub const ALL: [IgnoredKind; 9] = [
        IgnoredKind::Blank,
        IgnoredKind::NotJson,
        IgnoredKind::NotObject,
        IgnoredKind::Irrelevant,
        IgnoredKind::Unknown,
        IgnoredKind::Malformed,
        IgnoredKind::OtherSession,
        IgnoredKind::AfterTerminal,
        IgnoredKind::Oversized,
    ];
}

/// What became of a call the CLI ran itself, as its stream tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool answered; its answer may still be an error (an envelope's
    /// refusal comes back this way).
    Ran,
    /// The CLI itself refused to run it (its approval or permission rules).
    RefusedByCli,
    /// The CLI stopped waiting for the tool's answer.
    TimedOut,
    /// The CLI told its model there is no such tool; nothing ran.
    UnknownTool,
    /// The CLI reports the call failed for another reason of its own.
    Failed,
}

/// The end of one call, reported on a later line than the call itself.
#[derive(Debug, Clone, PartialEq)]
pub struct CallEnding {
    /// The call's id, as its [`HarnessStep::ToolCall`] gave it.
    pub call_id: String,
    /// What became of it.
    pub status: CallStatus,
    /// The CLI's or the tool's error text, when it gave one.
    pub error: Option<String>,
}

/// One step a reader extracted, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveStep {
    /// 1-based line number in the stream.
    pub line: usize,
    /// What the line means.
    pub step: HarnessStep,
    /// For tool calls: who runs the call. `None` for other steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<CallOrigin>,
    /// For a call the CLI ran: what became of it, once a line said so;
    /// `None` while the stream has not told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<CallStatus>,
    /// The error text that came with the status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LiveStep {
    /// A step whose call, if it is one, has not ended yet.
    #[must_use]
    pub fn new(line: usize, step: HarnessStep, origin: Option<CallOrigin>) -> LiveStep {
        LiveStep { line, step, origin, status: None, error: None }
    }
}

/// What one line gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LineReading {
    /// Steps, in order.
    pub steps: Vec<LiveStep>,
    /// Set when the line was not used.
    pub ignored: Option<IgnoredKind>,
    /// Calls of earlier steps (or of this line's) that ended here.
    pub ended: Vec<CallEnding>,
}

impl LineReading {
    /// A line not used, and why.
    #[must_use]
    pub fn ignored(kind: IgnoredKind) -> LineReading {
        LineReading { ignored: Some(kind), ..LineReading::default() }
    }

    /// A line that gave `steps`.
    #[must_use]
    pub fn steps(steps: Vec<LiveStep>) -> LineReading {
        LineReading { steps, ..LineReading::default() }
    }

    /// A line that ended one call and gave nothing else.
    #[must_use]
    pub fn ended(ending: CallEnding) -> LineReading {
        LineReading { ended: vec![ending], ..LineReading::default() }
    }
}

/// How the turn ended, as read from the stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LiveOutcome {
    /// The terminal line says the turn completed; `output` is the final
    /// answer by the vendor's own rule (e.g. Codex: the last agent message).
    Complete {
        /// The final answer.
        output: serde_json::Value,
        /// 1-based line of the terminal frame.
        line: usize,
    },
    /// The terminal line (or an error response) says the turn failed.
    Failed {
        /// The failure code; never `success`.
        code: String,
        /// The vendor's message.
        message: String,
        /// Whether the same turn may succeed if run again, by the
        /// vendor's own classes of failure.
        retryable: bool,
        /// 1-based line that ended the turn.
        line: usize,
    },
    /// The stream ended without a terminal line.
    NoOutcome,
}

impl LiveOutcome {
    /// The failure a [`HarnessStep::Failed`] error stands for, on `line`.
    #[must_use]
    pub fn failed(error: &sharedos_model::tool::ProtocolError, line: usize) -> LiveOutcome {
        LiveOutcome::Failed {
            code: error.code.clone(),
            message: error.message.clone(),
            retryable: error.retryable == Some(true),
            line,
        }
    }
}

/// A stateful reader of one vendor's real stream, one line at a time.
pub trait LiveStreamReader {
    /// Reads one line (without its newline). Never panics on any input.
    fn read_line(&mut self, line_number: usize, line: &str) -> LineReading;

    /// The turn's outcome once the stream has ended.
    fn outcome(&self) -> LiveOutcome;
}

/// What a whole stream gave: every step, the outcome, and ignored counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamReading {
    /// Every extracted step, in stream order.
    pub steps: Vec<LiveStep>,
    /// How the turn ended.
    pub outcome: LiveOutcome,
    /// Lines not used, by kind.
    pub ignored: BTreeMap<IgnoredKind, usize>,
}

/// Reads a whole captured stream with `reader`. Lines are split on `\n`; a
/// trailing `\r` is dropped; a final line without a newline is still read
/// (a truncated one is then counted `not_json`).
#[must_use]
pub fn read_stream(reader: &mut dyn LiveStreamReader, text: &str) -> StreamReading {
    let mut reading = Reading::default();
    let body = text.strip_suffix('\n').unwrap_or(text);
    if !body.is_empty() || text.ends_with('\n') {
        for raw in body.split('\n') {
            reading.line(reader, Some(raw));
        }
    }
    reading.finish(reader)
}

/// [`read_stream`] over bytes as they come, holding at most one line of at
/// most `max_line_bytes` (a longer one is counted `oversized` and skipped
/// unread), invalid UTF-8 replaced.
///
/// # Errors
/// When `input` cannot be read.
pub fn read_stream_from(
    reader: &mut dyn LiveStreamReader,
    mut input: impl std::io::Read,
    max_line_bytes: usize,
) -> std::io::Result<StreamReading> {
    use crate::child_process::splitter::{LineSplitter, RawLine};
    let mut reading = Reading::default();
    let mut splitter = LineSplitter::new(max_line_bytes);
    let mut chunk = vec![0; 64 * 1024];
    let mut lines = Vec::new();
    let feed = |reading: &mut Reading, reader: &mut dyn LiveStreamReader, line: RawLine| match line {
        RawLine::Bytes(bytes) => reading.line(reader, Some(&String::from_utf8_lossy(&bytes))),
        RawLine::Oversized => reading.line(reader, None),
    };
    loop {
        let read = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        splitter.push(&chunk[..read], &mut lines);
        for line in lines.drain(..) {
            feed(&mut reading, reader, line);
        }
    }
    if let Some(last) = splitter.finish() {
        feed(&mut reading, reader, last);
    }
    Ok(reading.finish(reader))
}

/// What a stream has given so far.
#[derive(Default)]
struct Reading {
    lines: usize,
    steps: Vec<LiveStep>,
    ignored: BTreeMap<IgnoredKind, usize>,
}

impl Reading {
    /// Reads the next line; `None` for one that passed the cap.
    fn line(&mut self, reader: &mut dyn LiveStreamReader, raw: Option<&str>) {
        self.lines += 1;
        let Some(raw) = raw else {
            *self.ignored.entry(IgnoredKind::Oversized).or_insert(0) += 1;
            return;
        };
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let reading = reader.read_line(self.lines, line);
        self.steps.extend(reading.steps);
        for ending in reading.ended {
            self.end_call(ending);
        }
        if let Some(kind) = reading.ignored {
            *self.ignored.entry(kind).or_insert(0) += 1;
        }
    }

    /// Marks the latest call with the ending's id; an ending whose call
    /// was never shown has nothing to mark.
    fn end_call(&mut self, ending: CallEnding) {
        let call = self
            .steps
            .iter_mut()
            .rev()
            .find(|step| matches!(&step.step, HarnessStep::ToolCall { call_id, .. } if *call_id == ending.call_id));
        if let Some(call) = call {
            call.status = Some(ending.status);
            call.error = ending.error;
        }
    }

    fn finish(self, reader: &mut dyn LiveStreamReader) -> StreamReading {
        StreamReading { steps: self.steps, outcome: reader.outcome(), ignored: self.ignored }
    }
}
