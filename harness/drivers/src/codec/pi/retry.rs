//! Whether Pi retries after an `agent_end`. Pi 0.73.1 writes a plain
//! `agent_end` (no `willRetry`) when a model call fails, then decides to
//! retry from the failure's message: `auto_retry_start` follows at once
//! when its last assistant message stopped with `error` and the message
//! names a transient failure. A seat that closed Pi's stdin there would end
//! Pi mid-retry (the end of input ends its session), so it waits for the
//! next `agent_end` instead. The words are Pi's own list of transient
//! failures; a context overflow is never retried.

use crate::frame::HarnessFrame;
use serde_json::Value;

/// Pi's transient failures, each a run of words where `.?` (here `?`)
/// stands for any one character or none.
const TRANSIENT: &[&str] = &[
    "overloaded",
    "provider?returned?error",
    "rate?limit",
    "too many requests",
    "429",
    "500",
    "502",
    "503",
    "504",
    "service?unavailable",
    "server?error",
    "internal?error",
    "network?error",
    "connection?error",
    "connection?refused",
    "connection?lost",
    "websocket?closed",
    "websocket?error",
    "other side closed",
    "fetch failed",
    "upstream?connect",
    "reset before headers",
    "socket hang up",
    "ended without",
    "http2 request did not get a response",
    "time out",
    "timed out",
    "timeout",
    "terminated",
    "retry delay",
];

/// Whether `frame` is an `agent_end` after which Pi, its retries on,
/// retries the model call.
#[must_use]
pub fn retry_follows(frame: &HarnessFrame) -> bool {
    if frame.get("type").and_then(Value::as_str) != Some("agent_end") || frame.get("willRetry").is_some() {
        return false;
    }
    let last = frame.get("messages").and_then(Value::as_array).and_then(|messages| {
        messages.iter().rev().find(|message| message.get("role").and_then(Value::as_str) == Some("assistant"))
    });
    let Some(last) = last else { return false };
    if last.get("stopReason").and_then(Value::as_str) != Some("error") {
        return false;
    }
    let message = last.get("errorMessage").and_then(Value::as_str).unwrap_or("").to_lowercase();
    !message.contains("context") && TRANSIENT.iter().any(|pattern| matches_loosely(&message, pattern))
}

/// Whether `text` holds `pattern`, each `?` in it one character or none.
fn matches_loosely(text: &str, pattern: &str) -> bool {
    let parts: Vec<&str> = pattern.split('?').collect();
    text.match_indices(parts[0]).any(|(at, first)| rest_matches(&text[at + first.len()..], &parts[1..]))
}

fn rest_matches(text: &str, parts: &[&str]) -> bool {
    let Some((part, rest)) = parts.split_first() else { return true };
    let skip_one = text.chars().next().map_or(0, char::len_utf8);
    [0, skip_one]
        .into_iter()
        .filter(|skip| *skip <= text.len())
        .any(|skip| text[skip..].strip_prefix(part).is_some_and(|after| rest_matches(after, rest)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn end(stop: &str, error: &str) -> HarnessFrame {
        let message = json!({ "role": "assistant", "stopReason": stop, "errorMessage": error });
        crate::wire::into_frame(json!({ "type": "agent_end", "messages": [{ "role": "user" }, message] }))
    }

    #[test]
    fn a_transient_failure_is_retried_and_a_final_one_is_not() {
        assert!(retry_follows(&end("error", "terminated")));
        assert!(retry_follows(&end("error", "529 Overloaded")));
        assert!(retry_follows(&end("error", "Rate-limit reached")));
        assert!(retry_follows(&end("error", "ratelimit")));
        assert!(retry_follows(&end("error", "Request timed out.")));
        assert!(!retry_follows(&end("error", "400 invalid_request_error")));
        assert!(!retry_follows(&end("error", "Anthropic stream ended before message_stop")));
        assert!(!retry_follows(&end("error", "prompt is too long: context window exceeded, 500")));
        assert!(!retry_follows(&end("stop", "")));
        let flagged = crate::wire::into_frame(json!({ "type": "agent_end", "willRetry": false, "messages": [] }));
        assert!(!retry_follows(&flagged));
    }
}
