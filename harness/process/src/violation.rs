//! Every way a runtime can break the protocol, each with the failure code
//! its turn ends with and the words the record carries.

use crate::message::{RuntimeMessage, PROTOCOL, RUNTIME_TYPES};
use serde_json::Value;

/// How much of what was received a diagnostic quotes.
const QUOTE_CHARS: usize = 256;

/// A protocol violation: the turn ends failed with [`Violation::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// A line that is not JSON.
    #[error("the runtime wrote a line that is not JSON ({error}): {received}")]
    NotJson {
        /// The parser's words.
        error: String,
        /// What was received, quoted.
        received: String,
    },
    /// A JSON value that is not an object.
    #[error("the runtime wrote JSON that is not an object: {received}")]
    NotObject {
        /// What was received, quoted.
        received: String,
    },
    /// A `type` the protocol does not define.
    #[error("the runtime wrote a message of unknown type {kind:?}: {received}")]
    UnknownType {
        /// The type named (empty when absent).
        kind: String,
        /// What was received, quoted.
        received: String,
    },
    /// A known type with an unknown, missing or mistyped field.
    #[error("the runtime wrote a malformed {kind} message ({error}): {received}")]
    BadMessage {
        /// The type.
        kind: String,
        /// The parser's words.
        error: String,
        /// What was received, quoted.
        received: String,
    },
    /// A line over the seat's cap.
    #[error("the runtime wrote a line over {max} bytes")]
    LineTooLong {
        /// The cap.
        max: usize,
    },
    /// A request id that is empty or longer than 128 characters.
    #[error("the runtime chose a request id of {chars} characters, not 1 to 128: {}", quote_id(.id))]
    BadRequestId {
        /// How many characters the id has.
        chars: usize,
        /// The id, cut after [`ID_QUOTE_CHARS`] characters.
        id: String,
    },
    /// A request id used twice in one turn.
    #[error("the runtime used request id {id:?} twice in one turn")]
    DuplicateId {
        /// The id.
        id: String,
    },
    /// A message about a turn that is not running.
    #[error("the runtime wrote about turn {named:?} while turn {running:?} runs")]
    WrongTurn {
        /// The turn named.
        named: String,
        /// The turn running.
        running: String,
    },
    /// A second ending for one turn.
    #[error("the runtime wrote {kind} after the turn's outcome")]
    AfterOutcome {
        /// The type.
        kind: String,
    },
    /// A well-formed message where the protocol does not allow it.
    #[error("{0}")]
    OutOfOrder(Misplaced),
    /// The seat's command could not be started at all.
    #[error("the runtime could not be started: `{command}`: {error}")]
    FailedToStart {
        /// The program.
        command: String,
        /// The system's words.
        error: String,
    },
    /// No `ready` in time, or something else first.
    #[error("the runtime did not say ready: {detail}")]
    NotReady {
        /// What happened instead.
        detail: String,
    },
    /// `ready` names another protocol, or its manifest another protocol
    /// version.
    #[error(
        "the runtime's ready names {named}; this harness speaks protocol \"{PROTOCOL}\" with manifest protocolVersion \"1\"{}",
        if *.previous { UPGRADE } else { "" }
    )]
    ProtocolMismatch {
        /// What it named, in words (`protocol "sharedos-runtime/0"`).
        named: String,
        /// It named the protocol's previous version: what changed is said.
        previous: bool,
    },
    /// A `wait` or `report` that says it has read more lines of the turn
    /// than the harness wrote.
    #[error(
        "the runtime's {kind} says it has seen {seen} lines, but the harness has written only {written} since the \
         turn's `turn` message, that message included"
    )]
    SeenAhead {
        /// `wait` or `report`.
        kind: &'static str,
        /// What the message said.
        seen: u64,
        /// Lines written to the runtime so far.
        written: u64,
    },
    /// The process exited or closed its stdout while the harness waited
    /// for something from it.
    #[error("the runtime exited or closed its output {}", .awaited.words())]
    Exited {
        /// What the harness was waiting for.
        awaited: Awaited,
    },
    /// Busy past the seat's limit of real time.
    #[error("the runtime stayed busy for more than {ms} ms of real time without waiting{}", stale_note(.stale_wait))]
    Unresponsive {
        /// The limit.
        ms: u64,
        /// The last wait that did not count, as (seen, written): a runtime
        /// that miscounts `seen` is never idle.
        stale_wait: Option<(u64, u64)>,
    },
    /// No `fenced` for the turn's fence within the seat's limit of real time.
    #[error(
        "the runtime did not echo the turn's fence within {ms} ms of real time (a {PROTOCOL} runtime answers each \
         `fence` with `fenced`, once it has written everything about the turn)"
    )]
    NoFenceEcho {
        /// The limit.
        ms: u64,
    },
    /// Too many lines that are not protocol (blank lines).
    #[error("the runtime wrote more than {max} blank lines")]
    Flood {
        /// The cap.
        max: usize,
    },
}

/// What the harness waited for when the runtime's output ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Awaited {
    /// `ready`, after `hello`.
    Ready,
    /// The turn's messages and its ending.
    Ending,
    /// A scripted seat's report, after the ending.
    Report,
    /// The echo of the turn's fence.
    Fenced,
}

impl Awaited {
    /// When the output ended, in words.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Awaited::Ready => "before it said ready",
            Awaited::Ending => "mid-turn",
            Awaited::Report => "before its report",
            Awaited::Fenced => "before it echoed the turn's fence",
        }
    }
}

/// A well-formed message the protocol does not allow where it came.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Misplaced {
    /// `ready` once the session has started.
    #[error("the runtime wrote ready again, in the middle of the session (ready comes once, after hello)")]
    ReadyMidSession,
    /// A `report` whose `seen` does not count `closed`: written before the
    /// runtime read it, whenever the harness happened to read the report.
    #[error(
        "the runtime wrote its report before it read closed: a report comes after closed, and its seen counts \
         closed"
    )]
    ReportBeforeClosed,
    /// A `report` after `closed`, while the harness had not yet taken the
    /// turn's end (the turn was stopped while its process started).
    #[error("the runtime wrote its report before the harness ended the turn")]
    ReportBeforeEnding,
    /// A scripted seat's `wait` after `closed` with nothing in flight.
    #[error("the runtime waited after closed with no call in flight: its report is due")]
    WaitWithNothingOwed,
    /// A line after the report other than `fenced`.
    #[error("the runtime wrote {kind} after its report (after the report, only fenced may come)")]
    AfterReport {
        /// Its type.
        kind: &'static str,
    },
    /// A `fenced` that echoes no fence the harness wrote for the turn.
    // The fence's number counts the fences of a process, and so depends on
    // which turns the process served before: the words never name it.
    #[error("{}", if *.asked {
        "the runtime echoed a fence other than the one the harness wrote for the turn"
    } else {
        "the runtime wrote fenced before the harness wrote a fence for the turn"
    })]
    Fenced {
        /// A fence was written for the turn.
        asked: bool,
    },
}

/// What a `ProtocolMismatch` adds for a runtime of the previous version.
const UPGRADE: &str = "; sharedos-runtime/2 adds `seen` to `report`, and a `fence` after each turn that the runtime \
                       echoes as `fenced` (PROTOCOL.md, \"Changes from sharedos-runtime/1\")";

/// How much of a request id a diagnostic quotes.
const ID_QUOTE_CHARS: usize = 40;

/// A request id, quoted, cut after [`ID_QUOTE_CHARS`] characters.
fn quote_id(id: &str) -> String {
    let mut quoted: String = id.chars().take(ID_QUOTE_CHARS).collect();
    if id.chars().count() > ID_QUOTE_CHARS {
        quoted.push('…');
    }
    format!("{quoted:?}")
}

fn stale_note(stale: &Option<(u64, u64)>) -> String {
    match stale {
        Some((seen, written)) => format!(
            "; its last wait said seen {seen} while the harness had written {written} lines of the turn, so it did \
             not count (seen counts every line the runtime has read since the turn's `turn` message, that message \
             included)"
        ),
        None => String::new(),
    }
}

impl Violation {
    /// Every code [`Violation::code`] gives, in `PROTOCOL.md`'s order.
    pub const CODES: [&'static str; 16] = [
        "runtime_not_json",
        "runtime_not_object",
        "runtime_unknown_type",
        "runtime_bad_message",
        "runtime_line_too_long",
        "runtime_duplicate_id",
        "runtime_wrong_turn",
        "runtime_after_outcome",
        "runtime_out_of_order",
        "runtime_failed_to_start",
        "runtime_not_ready",
        "runtime_protocol_mismatch",
        "runtime_exited",
        "runtime_bad_seen",
        "runtime_unresponsive",
        "runtime_flood",
    ];

    /// The failure code a turn ends with (`PROTOCOL.md`, *Violations*).
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Violation::NotJson { .. } => "runtime_not_json",
            Violation::NotObject { .. } => "runtime_not_object",
            Violation::UnknownType { .. } => "runtime_unknown_type",
            Violation::BadMessage { .. } => "runtime_bad_message",
            Violation::LineTooLong { .. } => "runtime_line_too_long",
            Violation::BadRequestId { .. } => "runtime_bad_message",
            Violation::DuplicateId { .. } => "runtime_duplicate_id",
            Violation::WrongTurn { .. } => "runtime_wrong_turn",
            Violation::AfterOutcome { .. } => "runtime_after_outcome",
            Violation::OutOfOrder { .. } => "runtime_out_of_order",
            Violation::FailedToStart { .. } => "runtime_failed_to_start",
            Violation::NotReady { .. } => "runtime_not_ready",
            Violation::ProtocolMismatch { .. } => "runtime_protocol_mismatch",
            Violation::Exited { .. } => "runtime_exited",
            Violation::SeenAhead { .. } => "runtime_bad_seen",
            Violation::Unresponsive { .. } | Violation::NoFenceEcho { .. } => "runtime_unresponsive",
            Violation::Flood { .. } => "runtime_flood",
        }
    }
}

impl Violation {
    /// The line received, quoted, for a violation about one line's form.
    #[must_use]
    pub fn received(&self) -> Option<&str> {
        match self {
            Violation::NotJson { received, .. }
            | Violation::NotObject { received }
            | Violation::UnknownType { received, .. }
            | Violation::BadMessage { received, .. } => Some(received),
            _ => None,
        }
    }

    /// Whether the violation is the last line read, well formed but not
    /// allowed where it came: that line is the one to quote.
    #[must_use]
    pub fn is_the_last_line(&self) -> bool {
        matches!(
            self,
            Violation::DuplicateId { .. }
                | Violation::BadRequestId { .. }
                | Violation::WrongTurn { .. }
                | Violation::AfterOutcome { .. }
                | Violation::OutOfOrder { .. }
                | Violation::ProtocolMismatch { .. }
                | Violation::SeenAhead { .. }
                | Violation::NotReady { .. }
        )
    }
}

/// What was received, quoted for a diagnostic: its first 256 characters.
/// A longer line is cut, and the quote then says how long it was and, for
/// a JSON object, its `type`, which sorted keys can put far past the cut.
#[must_use]
pub fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let total = text.chars().count();
    if total <= QUOTE_CHARS {
        return text.into_owned();
    }
    let mut quoted: String = text.chars().take(QUOTE_CHARS).collect();
    quoted.push_str(&format!("… ({total} characters"));
    let kind = serde_json::from_slice::<Value>(bytes).ok().and_then(|v| v.get("type")?.as_str().map(quote_id));
    if let Some(kind) = kind {
        quoted.push_str(&format!(", type {kind}"));
    }
    quoted.push(')');
    quoted
}

/// Reads one line a runtime wrote, strictly.
///
/// # Errors
/// The violation the line is.
pub fn parse_line(line: &[u8]) -> Result<RuntimeMessage, Violation> {
    // Nearly every line is a good message: read it into its type at once.
    // Only an object counts (serde would also take a tagged enum from an
    // array); a line that fails is read again below, only to say why.
    if line.trim_ascii_start().starts_with(b"{") {
        if let Ok(message) = serde_json::from_slice(line) {
            return Ok(message);
        }
    }
    diagnose(line)
}

/// The violation a line that is not a good message is; a good one parses.
fn diagnose(line: &[u8]) -> Result<RuntimeMessage, Violation> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| Violation::NotJson { error: e.to_string(), received: quote(line) })?;
    let Value::Object(object) = &value else {
        return Err(Violation::NotObject { received: quote(line) });
    };
    let kind = object.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    if !RUNTIME_TYPES.contains(&kind.as_str()) {
        return Err(Violation::UnknownType { kind, received: quote(line) });
    }
    serde_json::from_value(value).map_err(|e| Violation::BadMessage {
        kind,
        error: e.to_string(),
        received: quote(line),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_bad_line_is_its_own_violation() {
        let code = |line: &str| parse_line(line.as_bytes()).unwrap_err().code();
        assert_eq!(code("not json"), "runtime_not_json");
        assert_eq!(code("[1, 2]"), "runtime_not_object");
        assert_eq!(code(r#"{"type": "hello"}"#), "runtime_unknown_type");
        assert_eq!(code(r#"{"turn": "t"}"#), "runtime_unknown_type");
        assert_eq!(code(r#"{"type": "wait"}"#), "runtime_bad_message");
        assert_eq!(code(r#"{"type": "wait", "turn": "t", "seen": 1, "extra": 1}"#), "runtime_bad_message");
        assert_eq!(code(r#"{"type": "wait", "turn": "t", "seen": 1, "untilMs": "soon"}"#), "runtime_bad_message");
    }

    /// Lines the direct read and the reading through a JSON value could
    /// disagree on: repeated keys, escaped keys, arrays, odd spacing.
    #[test]
    fn reading_a_line_directly_agrees_with_reading_it_through_a_value() {
        let lines = [
            r#"{"type": "wait", "turn": "t", "seen": 1}"#,
            r#"  {"type": "wait", "turn": "t", "seen": 1}  "#,
            r#"{"type": "wait", "turn": "a", "turn": "b", "seen": 1}"#,
            r#"{"type": "wait", "type": "outcome", "turn": "t", "seen": 1}"#,
            r#"{"t\u0079pe": "wait", "turn": "t", "seen": 1}"#,
            r#"{"type": "wait", "turn": "t", "seen": 1.0}"#,
            r#"{"type": "wait", "turn": "t", "seen": 1, "untilMs": null}"#,
            r#"{"type": "wait", "turn": "t", "seen": 1} trailing"#,
            r#"["wait", "t", null, 1]"#,
            r#"{"type": "invokeTool", "turn": "t", "id": "c", "call": {"id": "c", "tool": "files.read", "arguments": {}, "traceId": "x", "requestedAt": "2026-01-01T00:00:00Z"}}"#,
            r#"{"type": "annotate", "turn": "t", "id": "a", "key": "k", "value": {"nested": [1, 2]}}"#,
            r#"{"type": "outcome", "turn": "t", "outcome": {"type": "complete"}}"#,
            r#"{"type": "thrown", "turn": "t", "error": {"message": "boom"}}"#,
            r#"{"type": "report", "turn": "t", "seen": 3, "receipts": []}"#,
            r#"{"type": "report", "turn": "t", "receipts": []}"#,
            r#"{"type": "fenced", "turn": "t", "fence": 1}"#,
            r#"{"type": "ready", "protocol": "sharedos-runtime/2", "manifest": {"id": "r", "version": "1", "protocolVersion": "1"}}"#,
        ];
        let mut good = 0;
        for line in lines {
            let (direct, through_value) = (parse_line(line.as_bytes()), diagnose(line.as_bytes()));
            assert_eq!(direct, through_value, "{line}");
            good += usize::from(direct.is_ok());
        }
        assert_eq!(good, 12, "the good lines among them");
    }

    #[test]
    fn good_lines_parse_into_their_messages() {
        let wait = parse_line(br#"{"type": "wait", "turn": "t", "untilMs": 5, "seen": 2}"#).unwrap();
        assert_eq!(wait, RuntimeMessage::Wait { turn: "t".into(), until_ms: Some(5), seen: 2 });
        let emit = parse_line(br#"{"type": "emit", "turn": "t", "id": "e1", "event": {"type": "x"}}"#).unwrap();
        assert_eq!(emit.turn(), Some("t"));
    }

    #[test]
    fn every_violation_has_one_of_the_listed_codes_and_each_code_one_violation() {
        let text = || String::new();
        let all = [
            Violation::NotJson { error: text(), received: text() },
            Violation::NotObject { received: text() },
            Violation::UnknownType { kind: text(), received: text() },
            Violation::BadMessage { kind: text(), error: text(), received: text() },
            Violation::LineTooLong { max: 1 },
            Violation::BadRequestId { chars: 0, id: text() },
            Violation::DuplicateId { id: text() },
            Violation::WrongTurn { named: text(), running: text() },
            Violation::AfterOutcome { kind: text() },
            Violation::OutOfOrder(Misplaced::ReadyMidSession),
            Violation::FailedToStart { command: text(), error: text() },
            Violation::NotReady { detail: text() },
            Violation::ProtocolMismatch { named: text(), previous: false },
            Violation::Exited { awaited: Awaited::Ending },
            Violation::SeenAhead { kind: "wait", seen: 2, written: 1 },
            Violation::Unresponsive { ms: 1, stale_wait: None },
            Violation::NoFenceEcho { ms: 1 },
            Violation::Flood { max: 1 },
        ];
        let codes: std::collections::BTreeSet<&str> = all.iter().map(Violation::code).collect();
        assert_eq!(all.len(), 18, "every variant");
        assert_eq!(
            codes,
            Violation::CODES.into_iter().collect(),
            "a bad request id is a bad message, a fence not echoed unresponsive"
        );
    }

    #[test]
    fn a_quote_is_cut_at_256_characters_and_says_how_long_the_line_was() {
        let long = "é".repeat(300);
        assert_eq!(quote(long.as_bytes()), format!("{}… (300 characters)", "é".repeat(256)));
        assert_eq!(quote("é".repeat(256).as_bytes()), "é".repeat(256), "a line at the cap is quoted whole");
    }

    /// With sorted keys, a long report's `type` comes after its receipts:
    /// the quote names it, whatever the cut leaves out.
    #[test]
    fn a_cut_quote_of_a_json_object_names_its_type() {
        let receipts = format!(r#"[{{"detail":"{}"}}]"#, "x".repeat(400));
        let line = format!(r#"{{"receipts":{receipts},"seen":9,"turn":"t1","type":"report"}}"#);
        let quoted = quote(line.as_bytes());
        assert_eq!(quoted, format!("{}… ({} characters, type \"report\")", &line[..256], line.len()));
        let long_type = format!(r#"{{"type":"{}","x":"{}"}}"#, "t".repeat(60), "y".repeat(300));
        let quoted = quote(long_type.as_bytes());
        assert!(quoted.ends_with(&format!(", type \"{}…\")", "t".repeat(40))), "{quoted}");
    }

    /// The words of the diagnostics a vendor reads most, exactly.
    #[test]
    fn a_long_request_id_is_counted_whole_and_quoted_short() {
        let id = "e".repeat(200);
        let violation = Violation::BadRequestId { chars: 200, id: id.chars().take(129).collect() };
        assert_eq!(
            violation.to_string(),
            format!("the runtime chose a request id of 200 characters, not 1 to 128: \"{}…\"", "e".repeat(40))
        );
    }

    #[test]
    fn an_exit_says_what_the_harness_was_waiting_for_and_never_quotes_stderr() {
        let words = |awaited| Violation::Exited { awaited }.to_string();
        assert_eq!(words(Awaited::Ready), "the runtime exited or closed its output before it said ready");
        assert_eq!(words(Awaited::Ending), "the runtime exited or closed its output mid-turn");
        assert_eq!(words(Awaited::Report), "the runtime exited or closed its output before its report");
        assert_eq!(words(Awaited::Fenced), "the runtime exited or closed its output before it echoed the turn's fence");
    }

    #[test]
    fn a_runtime_of_the_previous_version_is_told_what_changed() {
        let previous = Violation::ProtocolMismatch { named: "protocol \"sharedos-runtime/1\"".into(), previous: true };
        assert_eq!(
            previous.to_string(),
            "the runtime's ready names protocol \"sharedos-runtime/1\"; this harness speaks protocol \
             \"sharedos-runtime/2\" with manifest protocolVersion \"1\"; sharedos-runtime/2 adds `seen` to `report`, \
             and a `fence` after each turn that the runtime echoes as `fenced` (PROTOCOL.md, \"Changes from \
             sharedos-runtime/1\")"
        );
    }
}
