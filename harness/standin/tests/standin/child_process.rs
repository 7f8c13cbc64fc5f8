//! `ChildProcessTransport` and `HarnessProcess` against a real process: the
//! stand-in CLI built by this crate (found with `CARGO_BIN_EXE_*`, which
//! only this crate's tests can see).
//!
//! These run on a real-time runtime: a live process cannot run on a paused
//! clock. Bounds are short and every wait has a generous hang guard; no
//! test asserts how long anything took.

use crate::support;

use serde_json::{json, Value};
use sharedos_drivers::child_process::{
    ChannelEnd, ChildMode, ChildProcessTransport, HarnessProcess, Launch, ProcessDiagnostics, ProcessLimits,
    SkippedLine,
};
use sharedos_drivers::frame::HarnessFrame;
use sharedos_drivers::transport::{HarnessChannel, HarnessTransport, TransportError};
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::harness_request::harness_request;
use sharedos_testkit::json::object;
use std::future::Future;
use std::io::Write;
use std::time::Duration;
use support::{limits, standin, stream, HANG_GUARD};

async fn guarded<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(HANG_GUARD, future).await.expect("the transport hung")
}

fn received(line: Value) -> HarnessFrame {
    object(json!({"standin": "received", "line": line}))
}

async fn open(transport: &ChildProcessTransport) -> Box<dyn HarnessChannel> {
    guarded(transport.open(harness_request("standin.turn", "read the notes"), AbortSignal::new()))
        .await
        .expect("the channel opens")
}

async fn read(channel: &dyn HarnessChannel) -> Result<Option<HarnessFrame>, TransportError> {
    guarded(channel.read(AbortSignal::new())).await
}

/// Every frame until the channel ends.
async fn read_all(channel: &dyn HarnessChannel) -> Vec<HarnessFrame> {
    let mut frames = Vec::new();
    while let Some(frame) = read(channel).await.expect("a clean end") {
        frames.push(frame);
    }
    frames
}

fn only(transport: &ChildProcessTransport) -> ProcessDiagnostics {
    let mut all = transport.diagnostics();
    assert_eq!(all.len(), 1, "one process per open");
    all.remove(0)
}

/// The state letter of a live process, `None` once it is gone entirely.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next())
}

/// Waits until `pid` is no longer running (gone, or a zombie left for its
/// own parent to reap).
async fn until_not_running(pid: u32) -> Option<char> {
    guarded(async {
        loop {
            match process_state(pid) {
                None | Some('Z' | 'X') => return process_state(pid),
                Some(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    })
    .await
}

/// Waits until `pid` has been reaped.
async fn until_gone(pid: u32) {
    guarded(async {
        while process_state(pid).is_some() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn d27_opening_frames_are_written_in_order_one_line_each_before_open_returns() {
    let launch = standin(&["--answer", "--echo-stdin", &stream("handshake.jsonl")]);
    let transport = ChildProcessTransport::new(launch).with_opening(|request| {
        vec![
            object(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})),
            object(json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "sessionId": request.execution_id})),
        ]
    });
    let channel = open(&transport).await;
    assert_eq!(only(&transport).writes, 2, "both opening frames were written before open returned");
    let frames = read_all(&*channel).await;
    assert_eq!(
        frames,
        vec![
            received(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})),
            object(json!({"type": "ready", "step": 1})),
            received(json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "sessionId": "standin.turn"})),
            object(json!({"type": "ready", "step": 2})),
        ],
        "each opening frame arrived as its own line, in order"
    );
    guarded(channel.close()).await.unwrap();
}

#[tokio::test]
async fn d27_answer_mode_writes_each_result_as_one_json_line() {
    let launch = standin(&["--answer", "--echo-stdin", &stream("answer.jsonl")]);
    let transport = ChildProcessTransport::new(launch)
        .with_opening(|request| vec![object(json!({"type": "user_input", "text": request.prompt}))]);
    let channel = open(&transport).await;
    assert_eq!(read(&*channel).await.unwrap(), Some(received(json!({"type": "user_input", "text": "read the notes"}))));
    let call = read(&*channel).await.unwrap().unwrap();
    assert_eq!(call["callId"], "c1");
    let result = object(json!({"type": "tool_result", "callId": "c1", "output": "line one\nline two"}));
    guarded(channel.write(result.clone(), AbortSignal::new())).await.unwrap();
    assert_eq!(read(&*channel).await.unwrap(), Some(received(Value::Object(result))));
    assert_eq!(read(&*channel).await.unwrap(), Some(object(json!({"type": "complete", "output": {"ok": true}}))));
    assert_eq!(read(&*channel).await.unwrap(), None, "the stand-in exited after its last batch");
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.writes, 2);
    assert_eq!(diagnostics.exit.and_then(|exit| exit.code), Some(0));
}

#[tokio::test]
async fn d27_the_channel_ends_when_the_process_exits_and_stays_ended() {
    let transport = ChildProcessTransport::new(standin(&[&stream("partial.jsonl")]));
    let channel = open(&transport).await;
    assert_eq!(read_all(&*channel).await.len(), 2);
    assert_eq!(read(&*channel).await.unwrap(), None);
    assert_eq!(read(&*channel).await.unwrap(), None, "every later read also gets no frame");
    guarded(channel.close()).await.unwrap();
    assert!(matches!(only(&transport).end, Some(ChannelEnd::OutputClosed | ChannelEnd::Exited)));
}

#[tokio::test]
async fn d27_the_channel_ends_when_stdout_closes_even_if_the_process_lives_on() {
    // The stand-in cannot close its own stdout without `unsafe`; a shell can.
    let script = "echo '{\"type\":\"message\"}'; exec >&-; exec sleep 30";
    let launch = Launch::new("/bin/sh").args(["-c", script]).limits(limits());
    let transport = ChildProcessTransport::new(launch);
    let channel = open(&transport).await;
    assert_eq!(read_all(&*channel).await, vec![object(json!({"type": "message"}))]);
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.end, Some(ChannelEnd::OutputClosed));
    assert_eq!(diagnostics.exit, None, "the process is still running");
    guarded(channel.close()).await.unwrap();
    assert_eq!(process_state(diagnostics.pid.unwrap()), None, "closing killed and reaped it");
}

#[tokio::test]
async fn d27_non_json_lines_become_diagnostics_and_non_objects_are_dropped() {
    let transport = ChildProcessTransport::new(standin(&[&stream("noisy.jsonl")]));
    let channel = open(&transport).await;
    let frames = read_all(&*channel).await;
    assert_eq!(frames, vec![object(json!({"type": "message", "text": "hi"})), object(json!({"type": "complete"}))]);
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.stdout_notes, vec!["booting the harness".to_string()]);
    assert_eq!(diagnostics.skipped.get(&SkippedLine::NotJson), Some(&1));
    assert_eq!(diagnostics.skipped.get(&SkippedLine::NotObject), Some(&3), "[1,2], null and 42 are dropped");
    assert_eq!(diagnostics.skipped.get(&SkippedLine::Blank), Some(&2));
    assert_eq!(diagnostics.frames, 2);
}

#[tokio::test]
async fn d27_aborting_a_read_rejects_it_with_the_abort_reason() {
    let transport = ChildProcessTransport::new(standin(&["--hang"]));
    let channel = open(&transport).await;
    let signal = AbortSignal::new();
    let aborter = signal.clone();
    let abort = async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        aborter.abort(AbortReason::Timeout);
    };
    let (result, ()) = guarded(async { tokio::join!(channel.read(signal), abort) }).await;
    assert_eq!(result, Err(TransportError::Aborted(AbortReason::Timeout)));
    let pid = only(&transport).pid.unwrap();
    assert!(matches!(process_state(pid), Some(state) if state != 'Z'), "a read's own signal does not kill");
    guarded(channel.close()).await.unwrap();
}

#[tokio::test]
async fn d28_aborting_the_open_signal_sends_sigterm_to_the_running_child() {
    let transport = ChildProcessTransport::new(standin(&["--hang"]));
    let signal = AbortSignal::new();
    let channel =
        guarded(transport.open(harness_request("standin.turn", "read the notes"), signal.clone())).await.unwrap();
    let abort = async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        signal.abort(AbortReason::HostCancelled);
    };
    let (result, ()) = guarded(async { tokio::join!(channel.read(AbortSignal::new()), abort) }).await;
    assert_eq!(result, Err(TransportError::Aborted(AbortReason::HostCancelled)));
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.end, Some(ChannelEnd::Aborted));
    assert_eq!(diagnostics.exit.and_then(|exit| exit.signal), Some(15), "SIGTERM, not the close's own kill");
}

#[tokio::test]
async fn d28_draining_does_not_signal_the_process() {
    let launch = standin(&["--answer", "--echo-stdin", &stream("answer.jsonl")]);
    let transport = ChildProcessTransport::new(launch).with_opening(|_| vec![object(json!({"type": "user_input"}))]);
    let signal = AbortSignal::new();
    let channel =
        guarded(transport.open(harness_request("standin.turn", "read the notes"), signal.clone())).await.unwrap();
    assert!(read(&*channel).await.unwrap().is_some());
    assert!(read(&*channel).await.unwrap().is_some());
    // The turn starts draining: the only signal firing says so.
    signal.abort(AbortReason::Draining);
    let soft = AbortSignal::new();
    soft.abort(AbortReason::Draining);
    assert_eq!(guarded(channel.read(soft)).await, Err(TransportError::Aborted(AbortReason::Draining)));
    // The harness is still there: it reads the (refusal) result and ends on its own.
    let refusal = object(json!({"type": "tool_result", "status": "denied", "code": "turn_draining"}));
    guarded(channel.write(refusal.clone(), AbortSignal::new())).await.unwrap();
    let rest = read_all(&*channel).await;
    assert_eq!(
        rest,
        vec![received(Value::Object(refusal)), object(json!({"type": "complete", "output": {"ok": true}}))]
    );
    guarded(channel.close()).await.unwrap();
    let exit = only(&transport).exit.unwrap();
    assert_eq!((exit.code, exit.signal), (Some(0), None), "it exited on its own, unsignalled");
}

#[tokio::test]
async fn hang_is_ended_by_the_deadline_with_an_error() {
    let launch = standin(&["--hang"]).limits(ProcessLimits { deadline: Some(Duration::from_millis(300)), ..limits() });
    let transport = ChildProcessTransport::new(launch);
    let channel = open(&transport).await;
    let error = read(&*channel).await.unwrap_err();
    assert!(matches!(&error, TransportError::Io(m) if m.contains("deadline of 300 ms")), "{error}");
    assert!(matches!(read(&*channel).await, Err(TransportError::Io(_))), "the error stays");
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.end, Some(ChannelEnd::DeadlineExceeded));
    assert_eq!(diagnostics.exit.and_then(|exit| exit.signal), Some(15));
}

#[tokio::test]
async fn deadline_kills_the_whole_process_group() {
    let launch = standin(&["--spawn-grandchild", "--hang"])
        .limits(ProcessLimits { deadline: Some(Duration::from_millis(300)), ..limits() });
    let transport = ChildProcessTransport::new(launch);
    let channel = open(&transport).await;
    let report = read(&*channel).await.unwrap().unwrap();
    let grandchild = u32::try_from(report["pid"].as_u64().unwrap()).unwrap();
    assert!(matches!(read(&*channel).await, Err(TransportError::Io(_))));
    guarded(channel.close()).await.unwrap();
    let state = until_not_running(grandchild).await;
    assert!(state.is_none() || state == Some('Z'), "the grandchild was killed with its group");
}

#[tokio::test]
async fn flood_of_non_json_lines_ends_the_channel_at_the_ignored_line_cap() {
    let launch = standin(&["--flood", "lines"]).limits(ProcessLimits {
        max_ignored_lines: 100,
        max_stdout_notes: 8,
        ..limits()
    });
    let transport = ChildProcessTransport::new(launch);
    let channel = open(&transport).await;
    let error = read(&*channel).await.unwrap_err();
    assert!(matches!(&error, TransportError::Io(m) if m.contains("more than 100 stdout lines")), "{error}");
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.end, Some(ChannelEnd::TooManyIgnoredLines));
    assert_eq!(diagnostics.skipped.get(&SkippedLine::NotJson), Some(&101), "counting stops at the line past the cap");
    assert_eq!(diagnostics.stdout_notes.len(), 8, "notes are bounded");
}

#[tokio::test]
async fn flood_of_one_endless_line_is_never_buffered_and_ends_at_the_deadline() {
    let limits = ProcessLimits { max_line_bytes: 1024, deadline: Some(Duration::from_millis(300)), ..limits() };
    let transport = ChildProcessTransport::new(standin(&["--flood", "huge"]).limits(limits));
    let channel = open(&transport).await;
    assert!(matches!(read(&*channel).await, Err(TransportError::Io(m)) if m.contains("deadline")));
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.frames, 0);
    assert_eq!(diagnostics.exit.and_then(|exit| exit.signal), Some(15));
}

#[tokio::test]
async fn flood_of_frames_is_read_ahead_only_as_far_as_the_buffer_and_stopped_by_close() {
    let limits = ProcessLimits { frame_buffer: 4, ..limits() };
    let transport = ChildProcessTransport::new(standin(&["--flood", "frames"]).limits(limits));
    let channel = open(&transport).await;
    for _ in 0..2000 {
        assert_eq!(read(&*channel).await.unwrap().unwrap()["type"], "progress");
    }
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.end, Some(ChannelEnd::Closed));
    assert!(diagnostics.exit.is_some(), "reaped");
}

#[tokio::test]
async fn a_line_over_the_cap_is_skipped_and_reading_goes_on() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    writeln!(file, "{{\"type\":\"message\",\"text\":\"{}\"}}", "x".repeat(10_000)).unwrap();
    writeln!(file, "{{\"type\":\"complete\"}}").unwrap();
    let launch = standin(&[file.path().to_str().unwrap()]).limits(ProcessLimits { max_line_bytes: 1024, ..limits() });
    let transport = ChildProcessTransport::new(launch);
    let channel = open(&transport).await;
    assert_eq!(read_all(&*channel).await, vec![object(json!({"type": "complete"}))]);
    guarded(channel.close()).await.unwrap();
    assert_eq!(only(&transport).skipped.get(&SkippedLine::Oversized), Some(&1));
}

#[tokio::test]
async fn exit_mid_turn_ends_the_channel_without_an_outcome() {
    let transport = ChildProcessTransport::new(standin(&["--exit-mid-turn", &stream("partial.jsonl")]));
    let channel = open(&transport).await;
    let frames = read_all(&*channel).await;
    assert_eq!(frames.last().unwrap()["type"], "tool_call", "the turn never reached a terminal frame");
    guarded(channel.close()).await.unwrap();
    let exit = only(&transport).exit.unwrap();
    assert_eq!((exit.code, exit.signal), (Some(3), None));
}

#[tokio::test]
async fn truncated_last_line_is_a_diagnostic_not_a_frame() {
    let transport = ChildProcessTransport::new(standin(&["--truncate-last", &stream("answer.jsonl")]));
    let channel = open(&transport).await;
    let frames = read_all(&*channel).await;
    assert_eq!(frames.len(), 1, "only the whole first line is a frame");
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.skipped.get(&SkippedLine::NotJson), Some(&1));
    assert_eq!(diagnostics.stdout_notes, vec!["{\"type\":\"complete\",\"".to_string()]);
}

#[tokio::test]
async fn env_is_cleared_and_only_named_variables_reach_the_child() {
    let ambient_path = std::env::var("PATH").unwrap_or_default();
    let launch = standin(&["--print-env"])
        .inherit_env("PATH")
        .inherit_env("SHAREDOS_STANDIN_NEVER_SET")
        .env("SHAREDOS_COLUMN", "codex-live");
    let transport = ChildProcessTransport::new(launch);
    let channel = open(&transport).await;
    let report = read(&*channel).await.unwrap().unwrap();
    let expected = json!({"PATH": ambient_path, "SHAREDOS_COLUMN": "codex-live"});
    assert_eq!(report["env"], expected, "HOME, USER, CARGO_* and the rest of the ambient environment stay out");
    guarded(channel.close()).await.unwrap();
}

#[tokio::test]
async fn no_zombie_is_left_after_close() {
    let transport = ChildProcessTransport::new(standin(&["--hang"]));
    let channel = open(&transport).await;
    let pid = only(&transport).pid.unwrap();
    assert!(matches!(process_state(pid), Some(state) if state != 'Z'), "running before close");
    guarded(channel.close()).await.unwrap();
    assert_eq!(process_state(pid), None, "after close the child is reaped, not a zombie");
    guarded(channel.close()).await.unwrap();
}

#[tokio::test]
async fn no_zombie_is_left_when_the_child_exits_on_its_own() {
    let transport = ChildProcessTransport::new(standin(&[&stream("partial.jsonl")]));
    let channel = open(&transport).await;
    let pid = only(&transport).pid.unwrap();
    read_all(&*channel).await;
    // No close: the reading task reaps the child by itself.
    until_gone(pid).await;
    assert_eq!(only(&transport).exit.and_then(|exit| exit.code), Some(0));
    drop(channel);
}

#[tokio::test]
async fn no_zombie_is_left_when_the_channel_is_dropped_unclosed() {
    let transport = ChildProcessTransport::new(standin(&["--hang"]));
    let channel = open(&transport).await;
    let pid = only(&transport).pid.unwrap();
    drop(channel);
    until_gone(pid).await;
    assert_eq!(only(&transport).end, Some(ChannelEnd::Closed));
}

#[tokio::test]
async fn stderr_is_kept_to_a_bounded_tail() {
    let launch = standin(&["--stderr-flood", "1000000", &stream("partial.jsonl")])
        .limits(ProcessLimits { stderr_tail_bytes: 4096, ..limits() });
    let transport = ChildProcessTransport::new(launch);
    let channel = open(&transport).await;
    assert_eq!(read_all(&*channel).await.len(), 2, "a chatty stderr never blocks stdout");
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!(diagnostics.stderr_bytes, 1_000_000);
    assert_eq!(diagnostics.stderr_tail.len(), 4096);
    assert!(diagnostics.stderr_tail.contains("of a chatty harness"));
}

#[tokio::test]
async fn observe_mode_reads_only_and_drops_written_results() {
    let launch = standin(&["--answer", "--echo-stdin", &stream("answer.jsonl")])
        .mode(ChildMode::Observe)
        .end_input_after_opening(true);
    let transport = ChildProcessTransport::new(launch).with_opening(|_| vec![object(json!({"type": "user_input"}))]);
    let channel = open(&transport).await;
    assert_eq!(read(&*channel).await.unwrap(), Some(received(json!({"type": "user_input"}))));
    assert_eq!(read(&*channel).await.unwrap().unwrap()["type"], "tool_call");
    guarded(channel.write(object(json!({"type": "tool_result"})), AbortSignal::new())).await.unwrap();
    assert_eq!(
        read_all(&*channel).await,
        Vec::<HarnessFrame>::new(),
        "the stand-in saw end of input, never the result"
    );
    guarded(channel.close()).await.unwrap();
    let diagnostics = only(&transport);
    assert_eq!((diagnostics.writes, diagnostics.dropped_writes), (1, 1));
}

#[tokio::test]
async fn a_closed_channel_reads_nothing_and_refuses_writes() {
    let transport = ChildProcessTransport::new(standin(&["--hang"]));
    let channel = open(&transport).await;
    guarded(channel.close()).await.unwrap();
    assert_eq!(read(&*channel).await, Ok(None));
    let written = guarded(channel.write(object(json!({})), AbortSignal::new())).await;
    assert_eq!(written, Err(TransportError::Closed));
}

#[tokio::test]
async fn d27_every_reader_waiting_when_the_process_exits_gets_no_frame() {
    let launch = standin(&["--answer", &stream("answer.jsonl")]);
    let process = HarnessProcess::start(&launch, AbortSignal::new()).unwrap();
    let end_input = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        // The stand-in sees end of input before its first batch and exits.
        process.end_input().await;
    };
    let (first, second, ()) = guarded(async {
        tokio::join!(process.next_frame(AbortSignal::new()), process.next_frame(AbortSignal::new()), end_input)
    })
    .await;
    assert_eq!((first, second), (Ok(None), Ok(None)));
    assert!(process.input_ended());
    let exit = guarded(process.exited()).await.unwrap();
    assert_eq!((exit.code, exit.signal), (Some(0), None));
    guarded(process.dispose()).await;
}

#[tokio::test]
async fn a_member_that_outlives_its_leader_and_ignores_sigterm_is_killed_with_the_group() {
    // A wrapper's shape: it starts a child that ignores SIGTERM and lets go
    // of the pipes, says the child's pid, and exits at once. The group is
    // sent SIGTERM when the leader exits, which the child ignores; only the
    // SIGKILL after the leader's exit ends it.
    let body = "(trap '' TERM; exec sleep 30) </dev/null >/dev/null 2>&1 &\necho \"{\\\"pid\\\": $!}\"\nexit 0";
    let launch = Launch::new("/bin/sh").args(["-c".to_string(), body.to_string()]).env("PATH", "/usr/bin:/bin");
    let process = HarnessProcess::start(&launch.mode(ChildMode::Observe).limits(limits()), AbortSignal::new()).unwrap();
    let frame = guarded(process.next_frame(AbortSignal::new())).await.unwrap().expect("the pid frame");
    let orphan = u32::try_from(frame["pid"].as_u64().unwrap()).unwrap();
    assert_eq!(guarded(process.exited()).await.and_then(|exit| exit.code), Some(0), "the leader exited by itself");
    guarded(process.dispose()).await;
    let state = until_not_running(orphan).await;
    assert!(state.is_none() || state == Some('Z'), "the orphan went with its group: {state:?}");
}

#[tokio::test]
async fn a_process_that_left_the_group_for_a_session_of_its_own_goes_with_the_cage() {
    use sharedos_contain::cage::{mechanism, Mechanism};
    // A CLI that starts a child in a session of its own, deaf to SIGTERM
    // and SIGHUP, waits until it is there (it says so on a FIFO), says its
    // pid, and exits: no group kill reaches it.
    let folder = tempfile::tempdir().unwrap();
    let fifo = folder.path().join("there");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let body =
        "(exec setsid sh -c 'trap \"\" TERM HUP; echo >\"$0\"; exec sleep 30' \"$0\") </dev/null >/dev/null 2>&1 &\n\
                read there <\"$0\"\necho \"{\\\"pid\\\": $!}\"\nexit 0";
    let args = ["-c".to_string(), body.to_string(), fifo.display().to_string()];
    let launch = Launch::new("/bin/sh").args(args).env("PATH", "/usr/bin:/bin");
    let process = HarnessProcess::start(&launch.mode(ChildMode::Observe).limits(limits()), AbortSignal::new()).unwrap();
    let frame = guarded(process.next_frame(AbortSignal::new())).await.unwrap().expect("the pid frame");
    let escaped = u32::try_from(frame["pid"].as_u64().unwrap()).unwrap();
    guarded(process.dispose()).await;
    match mechanism() {
        Mechanism::Cgroup => {
            let state = until_not_running(escaped).await;
            assert!(state.is_none() || state == Some('Z'), "the escaped process went with the cage: {state:?}");
        }
        Mechanism::ProcessGroup => {
            // Left for the command's end, where the CLI's subreaper kills it.
            assert!(process_state(escaped).is_some_and(|state| state != 'Z'));
            let _ = std::process::Command::new("kill").arg("-KILL").arg(escaped.to_string()).status();
        }
    }
}
