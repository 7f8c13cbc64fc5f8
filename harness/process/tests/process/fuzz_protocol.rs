//! The runtime protocol's reader never panics: every message a runtime may
//! write, damaged (a value replaced, a key removed, cut short, or bytes
//! instead), is read or refused with a violation. `scripts/fuzz.sh` runs
//! this at 100 000 cases.

use proptest::prelude::*;
use sharedos_process::violation::parse_line;
use sharedos_testkit::mutate::{damage, damaged};

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "type", "turn", "id", "seen", "untilMs", "call", "tool", "arguments", "traceId", "requestedAt", "options", "step",
    "event", "kind", "data", "key", "value", "outcome", "error", "message", "receipts", "protocol", "manifest",
    "ready", "invokeTool", "emit", "annotate", "wait", "thrown", "report", "complete", "fail", "escalate",
    "fenced", "fence", "sharedos-runtime/2", "t1",
];

const MESSAGES: &[&str] = &[
    r#"{"type":"ready","protocol":"sharedos-runtime/2","manifest":{"id":"acme","version":"1","protocolVersion":"1"}}"#,
    r#"{"type":"invokeTool","turn":"t1","id":"c1","call":{"id":"c1","tool":"files.read","arguments":{"path":["Workspace","policy.md"]},"traceId":"tr","requestedAt":"2026-01-01T00:00:00.000Z"},"options":{"step":1}}"#,
    r#"{"type":"emit","turn":"t1","id":"e1","event":{"type":"progress","data":{"n":1}}}"#,
    r#"{"type":"annotate","turn":"t1","id":"a1","key":"promptHash","value":"abc"}"#,
    r#"{"type":"wait","turn":"t1","seen":3,"untilMs":250}"#,
    r#"{"type":"outcome","turn":"t1","outcome":{"type":"complete","output":{"done":true}}}"#,
    r#"{"type":"thrown","turn":"t1","error":{"message":"boom"}}"#,
    r#"{"type":"report","turn":"t1","seen":7,"receipts":[{"attemptId":"a","attempted":true}]}"#,
    r#"{"type":"fenced","turn":"t1","fence":1}"#,
];

proptest! {
    #[test]
    fn the_runtime_message_reader_never_panics(which in any::<usize>(), damage in damage(WORDS)) {
        let message = MESSAGES[which % MESSAGES.len()];
        let _ = parse_line(&damaged(message, &damage));
    }
}

#[test]
fn every_base_message_reads() {
    for message in MESSAGES {
        assert!(parse_line(message.as_bytes()).is_ok(), "{message}");
    }
    assert_eq!(MESSAGES.len(), 9);
}
