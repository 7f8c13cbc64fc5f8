//! Reading a real DeepSeek Harness SDK server stream for one prompted turn.

use super::event::{error_response, event_meaning, joined_text, session_event, EventMeaning, SessionEvent};
use crate::frame::{HarnessFrame, HarnessStep};
use crate::live::{CallOrigin, IgnoredKind, LineReading, LiveOutcome, LiveStep, LiveStreamReader};
use crate::wire::{non_empty, parse_line};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Reads the server's stdout for the one session the client prompted.
///
/// # Which session is ours
///
/// The server notifies events for every session in its runtime, sub-agent
/// children included, so the reader first settles which session is the
/// turn's own; a session, once settled, never changes:
///
/// 1. [`DeepSeekLiveReader::for_session`] names it up front (the transport
///    chose the id it put in `session/prompt`).
/// 2. Otherwise, when the capture also holds the client's requests, the
///    first `session/prompt` request names it (`params.sessionId`).
/// 3. Otherwise the first well-formed `session.event` whose session was not
///    announced as a child by `subagent.started` names it. The parent's own
///    events open the turn before any child can exist, so this is the
///    prompted session on a one-client pipe.
///
/// Events of any other session, and of every announced child, are counted
/// [`IgnoredKind::OtherSession`]: a child's `turn/end` does not end ours.
/// Events with no session (the bare form) are read as the turn's own.
///
/// # Request ids and error responses
///
/// A JSON-RPC error response to one of our requests fails the turn with
/// `harness_request_rejected`. Our ids are those given to
/// [`DeepSeekLiveReader::with_request_ids`] plus those of requests seen in
/// the capture (except a `session/prompt` for another session). While no id
/// is known, every error response is ours: the server answers only its one
/// client on stdio. Once ids are known, an error to another id is
/// [`IgnoredKind::Irrelevant`].
///
/// # Ending the turn
///
/// Our session's `turn/end` ends the turn. Kinds `aborted`, `blocked`,
/// `error` and `interrupted` fail it; every other kind completes it.
/// `max-tokens` completes it too (the server records it even on turns a
/// plugin carried to completion): the `complete` step carries
/// `metadata: {"turnEndKind": "max-tokens"}`, and the outcome is `complete`.
/// The outcome's output is `{"text": ...}` holding the last
/// `assistant/message` of our session that had text (its text blocks joined
/// with `\n`), or `""` when there was none. Lines after the ending are
/// [`IgnoredKind::AfterTerminal`].
///
/// # Steps
///
/// A `tool/call` is a call the CLI runs itself: a `tool_call` step with
/// origin [`CallOrigin::RanByCli`]. Its arguments, when they are not a JSON
/// object, make the line [`IgnoredKind::Malformed`] rather than fail the
/// turn, since the CLI (not the driver) handled that call. Assistant text is
/// a `message` step; the ending is a `failed` step, or a `complete` step
/// whose output is the outcome's.
#[derive(Debug, Clone, Default)]
pub struct DeepSeekLiveReader {
    session: Option<String>,
    request_ids: Vec<Value>,
    children: BTreeSet<String>,
    final_text: Option<String>,
    outcome: Option<LiveOutcome>,
}

impl DeepSeekLiveReader {
    /// A reader for the session the client prompted, known in advance.
    #[must_use]
    pub fn for_session(session_id: impl Into<String>) -> DeepSeekLiveReader {
        DeepSeekLiveReader { session: Some(session_id.into()), ..DeepSeekLiveReader::default() }
    }

    /// Adds the ids of requests the client sent; an error response to any of
    /// them fails the turn.
    #[must_use]
    pub fn with_request_ids(mut self, ids: impl IntoIterator<Item = Value>) -> DeepSeekLiveReader {
        for id in ids {
            self.remember_request(id);
        }
        self
    }

    /// The session the reader settled on, if any yet.
    #[must_use]
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    fn remember_request(&mut self, id: Value) {
        if !self.request_ids.contains(&id) {
            self.request_ids.push(id);
        }
    }

    fn read_frame(&mut self, line: usize, frame: &HarnessFrame) -> LineReading {
        if let Some(method) = frame.get("method").and_then(Value::as_str) {
            if let Some(id) = frame.get("id") {
                return self.read_request(method, id.clone(), frame);
            }
            return self.read_notification(line, method, frame);
        }
        if frame.contains_key("id") {
            return self.read_response(line, frame);
        }
        match session_event(frame) {
            Some(event) => self.read_event(line, &event),
            None => ignored(IgnoredKind::Unknown),
        }
    }

    /// A request from the client, visible when the capture holds both
    /// directions.
    fn read_request(&mut self, method: &str, id: Value, frame: &HarnessFrame) -> LineReading {
        if method != "session/prompt" {
            self.remember_request(id);
            return ignored(IgnoredKind::Irrelevant);
        }
        let Some(session) = params_text(frame, "sessionId") else {
            return ignored(IgnoredKind::Malformed);
        };
        if !self.claims(session) {
            return ignored(IgnoredKind::OtherSession);
        }
        self.remember_request(id);
        ignored(IgnoredKind::Irrelevant)
    }

    fn read_notification(&mut self, line: usize, method: &str, frame: &HarnessFrame) -> LineReading {
        match method {
            "session.event" => match session_event(frame) {
                Some(event) => self.read_event(line, &event),
                None => ignored(IgnoredKind::Malformed),
            },
            "session.status" => match params_text(frame, "sessionId") {
                Some(session) if self.is_other(session) => ignored(IgnoredKind::OtherSession),
                Some(_) => ignored(IgnoredKind::Irrelevant),
                None => ignored(IgnoredKind::Malformed),
            },
            "subagent.started" => match params_text(frame, "childSessionId") {
                Some(child) => {
                    self.children.insert(child.to_string());
                    ignored(IgnoredKind::Irrelevant)
                }
                None => ignored(IgnoredKind::Malformed),
            },
            "subagent.finished" => ignored(IgnoredKind::Irrelevant),
            _ => ignored(IgnoredKind::Unknown),
        }
    }

    fn read_response(&mut self, line: usize, frame: &HarnessFrame) -> LineReading {
        if let Some((id, step)) = error_response(frame) {
            if !self.request_ids.is_empty() && !self.request_ids.contains(id) {
                return ignored(IgnoredKind::Irrelevant);
            }
            return self.end(line, step);
        }
        if frame.contains_key("result") {
            return ignored(IgnoredKind::Irrelevant);
        }
        ignored(IgnoredKind::Malformed)
    }

    fn read_event(&mut self, line: usize, event: &SessionEvent<'_>) -> LineReading {
        if let Some(session) = event.session_id {
            if !self.claims(session) {
                return ignored(IgnoredKind::OtherSession);
            }
        }
        match event_meaning(event) {
            EventMeaning::Call(step) => LineReading::steps(vec![LiveStep::new(line, step, Some(CallOrigin::RanByCli))]),
            EventMeaning::Prose(steps) => match joined_text(&steps) {
                Some(text) => {
                    self.final_text = Some(text);
                    let steps = steps.into_iter().map(|step| LiveStep::new(line, step, None)).collect();
                    LineReading::steps(steps)
                }
                None => ignored(IgnoredKind::Irrelevant),
            },
            EventMeaning::TurnEnd(step) => self.end(line, step),
            EventMeaning::UnparseableArguments | EventMeaning::Malformed => ignored(IgnoredKind::Malformed),
            EventMeaning::Irrelevant => ignored(IgnoredKind::Irrelevant),
            EventMeaning::Unknown => ignored(IgnoredKind::Unknown),
        }
    }

    /// Whether `session` is ours, settling on it when none is settled yet.
    fn claims(&mut self, session: &str) -> bool {
        if self.children.contains(session) {
            return false;
        }
        match &self.session {
            Some(ours) => ours == session,
            None => {
                self.session = Some(session.to_string());
                true
            }
        }
    }

    /// Whether `session` is known not to be ours, without settling.
    fn is_other(&self, session: &str) -> bool {
        self.children.contains(session) || self.session.as_deref().is_some_and(|ours| ours != session)
    }

    /// Ends the turn; a completion carries the final answer in its step too.
    fn end(&mut self, line: usize, step: HarnessStep) -> LineReading {
        let (step, outcome) = ending(line, step, self.final_text.as_deref());
        self.outcome = Some(outcome);
        LineReading::steps(vec![LiveStep::new(line, step, None)])
    }
}

impl LiveStreamReader for DeepSeekLiveReader {
    fn read_line(&mut self, line_number: usize, line: &str) -> LineReading {
        match parse_line(line) {
            Err(kind) => ignored(kind),
            Ok(_) if self.outcome.is_some() => ignored(IgnoredKind::AfterTerminal),
            Ok(frame) => self.read_frame(line_number, &frame),
        }
    }

    fn outcome(&self) -> LiveOutcome {
        self.outcome.clone().unwrap_or(LiveOutcome::NoOutcome)
    }
}

fn params_text<'a>(frame: &'a HarnessFrame, key: &str) -> Option<&'a str> {
    frame.get("params").and_then(Value::as_object).and_then(|params| non_empty(params, key))
}

fn ignored(kind: IgnoredKind) -> LineReading {
    LineReading::ignored(kind)
}

/// The terminal step as reported, and the outcome it gives: a failure keeps
/// its code and message; a completion's output is `{"text": final_text}`.
fn ending(line: usize, step: HarnessStep, final_text: Option<&str>) -> (HarnessStep, LiveOutcome) {
    match step {
        HarnessStep::Failed { error } => {
            let outcome = LiveOutcome::failed(&error, line);
            (HarnessStep::Failed { error }, outcome)
        }
        HarnessStep::Complete { metadata, .. } => {
            let output = json!({"text": final_text.unwrap_or_default()});
            let outcome = LiveOutcome::Complete { output: output.clone(), line };
            (HarnessStep::Complete { output: Some(output), metadata }, outcome)
        }
        other => (other, LiveOutcome::NoOutcome),
    }
}
