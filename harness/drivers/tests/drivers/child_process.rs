//! The child-process transport's pure parts (line cutting, classification,
//! the environment rule, limits, diagnostics bounds) and the refusals that
//! never spawn. Tests against a real process live in the stand-in crate
//! (`harness/standin/tests/child_process.rs`), which owns the binary they run.

use sharedos_drivers::child_process::lines::{classify, LineKind};
use sharedos_drivers::child_process::splitter::{LineSplitter, RawLine};
use sharedos_drivers::child_process::{
    ChildProcessTransport, DiagnosticsLog, HarnessProcess, Launch, ProcessLimits, SkippedLine,
};
use sharedos_drivers::transport::{HarnessTransport, TransportError};
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::harness_request::harness_request;
use std::ffi::OsString;

fn split(max: usize, chunks: &[&[u8]]) -> Vec<RawLine> {
    let mut splitter = LineSplitter::new(max);
    let mut out = Vec::new();
    for chunk in chunks {
        splitter.push(chunk, &mut out);
    }
    out.extend(splitter.finish());
    out
}

fn bytes(text: &str) -> RawLine {
    RawLine::Bytes(text.as_bytes().to_vec())
}

#[test]
fn lines_are_cut_on_newlines_across_chunks() {
    let lines = split(64, &[b"{\"a\":", b"1}\n{\"b\"", b":2}\n"]);
    assert_eq!(lines, vec![bytes("{\"a\":1}"), bytes("{\"b\":2}")]);
}

#[test]
fn a_final_line_without_newline_is_still_cut() {
    assert_eq!(split(64, &[b"{}\n{\"cut"]), vec![bytes("{}"), bytes("{\"cut")]);
    assert_eq!(split(64, &[b"{}\n"]), vec![bytes("{}")], "no phantom empty line after the last newline");
}

#[test]
fn a_line_over_the_cap_is_skipped_and_the_next_line_is_kept() {
    let long = vec![b'x'; 100];
    let lines = split(10, &[&long[..40], &long[40..], b"\n{}\n"]);
    assert_eq!(lines, vec![RawLine::Oversized, bytes("{}")]);
    assert_eq!(split(10, &[&long]), vec![RawLine::Oversized], "an endless line is reported at the end");
}

#[test]
fn a_line_exactly_at_the_cap_is_kept() {
    assert_eq!(split(4, &[b"abcd\nabcde\n"]), vec![bytes("abcd"), RawLine::Oversized]);
}

#[test]
fn lines_are_classified_like_the_stream_reader_does() {
    assert!(matches!(classify(bytes(" {\"type\":\"x\"}\r")), LineKind::Frame(f) if f["type"] == "x"));
    let skipped = |line| match classify(line) {
        LineKind::Skipped { kind, note } => (kind, note),
        LineKind::Frame(frame) => panic!("unexpected frame {frame:?}"),
    };
    assert_eq!(skipped(bytes("   ")), (SkippedLine::Blank, None));
    assert_eq!(skipped(bytes("[1,2]")), (SkippedLine::NotObject, None));
    assert_eq!(skipped(bytes("null")), (SkippedLine::NotObject, None));
    assert_eq!(skipped(bytes("warming up ")), (SkippedLine::NotJson, Some("warming up".to_string())));
    assert_eq!(skipped(RawLine::Bytes(vec![0xff, b'{'])).0, SkippedLine::NotJson);
    assert_eq!(skipped(RawLine::Oversized), (SkippedLine::Oversized, None));
}

#[test]
fn the_child_sees_only_the_variables_the_launch_names() {
    let launch =
        Launch::new("cli").inherit_env("PATH").inherit_env("UNSET_ONE").inherit_env("TOKEN").env("TOKEN", "set");
    let ambient = |name: &str| match name {
        "PATH" => Some(OsString::from("/bin")),
        "TOKEN" => Some(OsString::from("ambient")),
        "HOME" => Some(OsString::from("/home/me")),
        _ => None,
    };
    let env = launch.child_environment(ambient);
    let expected: Vec<(String, OsString)> = vec![("PATH".into(), "/bin".into()), ("TOKEN".into(), "set".into())];
    assert_eq!(env.into_iter().collect::<Vec<_>>(), expected, "HOME is ambient but not named; set values win");
}

#[test]
fn limits_refuse_zero_bounds() {
    assert!(ProcessLimits::default().validate().is_ok());
    let zero = ProcessLimits { max_ignored_lines: 0, ..ProcessLimits::default() };
    assert!(matches!(zero.validate(), Err(TransportError::Invalid(m)) if m.contains("max_ignored_lines")));
}

#[test]
fn stderr_tail_and_notes_stay_within_their_bounds() {
    let log = DiagnosticsLog::new("cli", 8, 2);
    log.stderr(b"0123456789");
    log.stderr(b"ab");
    for note in ["one", "two", "three"] {
        log.skipped(SkippedLine::NotJson, Some(note.to_string()));
    }
    log.skipped(SkippedLine::NotJson, Some("y".repeat(5000)));
    let snapshot = log.snapshot();
    assert_eq!(snapshot.stderr_tail, "456789ab");
    assert_eq!(snapshot.stderr_bytes, 12);
    assert_eq!(snapshot.stdout_notes.len(), 2);
    assert_eq!(snapshot.stdout_notes[0], "three");
    assert_eq!(snapshot.stdout_notes[1].len(), 1024, "a long note is cut");
    assert_eq!(snapshot.stdout_notes_dropped, 2);
    assert_eq!(snapshot.skipped[&SkippedLine::NotJson], 4);
}

#[tokio::test]
async fn d28_the_process_refuses_to_start_under_an_aborted_signal() {
    let signal = AbortSignal::new();
    signal.abort(AbortReason::HostCancelled);
    // The command does not exist: refusing must come before any spawn.
    let launch = Launch::new("/nonexistent/sharedos-cli");
    let error = HarnessProcess::start(&launch, signal.clone()).unwrap_err();
    assert_eq!(error, TransportError::Aborted(AbortReason::HostCancelled));
    let transport = ChildProcessTransport::new(launch);
    let error = transport.open(harness_request("t1", "p"), signal).await.err().expect("refused");
    assert_eq!(error, TransportError::Aborted(AbortReason::HostCancelled));
    assert!(transport.diagnostics().is_empty(), "nothing was started");
}

#[tokio::test]
async fn a_missing_executable_fails_to_start() {
    let transport = ChildProcessTransport::new(Launch::new("/nonexistent/sharedos-cli"));
    let error = transport.open(harness_request("t1", "p"), AbortSignal::new()).await.err().expect("refused");
    assert!(matches!(error, TransportError::NotStarted(m) if m.contains("/nonexistent/sharedos-cli")));
}

#[tokio::test]
async fn unusable_limits_are_refused_before_spawning() {
    let launch =
        Launch::new("/nonexistent/sharedos-cli").limits(ProcessLimits { frame_buffer: 0, ..ProcessLimits::default() });
    let error = ChildProcessTransport::new(launch)
        .open(harness_request("t1", "p"), AbortSignal::new())
        .await
        .err()
        .expect("refused");
    assert!(matches!(error, TransportError::Invalid(_)));
}
