//! Streams the pinned vendor CLIs really wrote (`tests/streams/<vendor>/
//! real-<version>/`, captured against a scripted model on loopback; each
//! folder's README says how and what each file is), read the way `decode`
//! reads them: the vendor's live reader fed the bytes as they come, under
//! the live transport's line cap. Every file of a folder must be listed
//! here with its full reading: the outcome (its kind, a failure's code and
//! message, a completion's answer), every observed call's tool in order,
//! and no line of an unknown or malformed shape. The terminal line read
//! alone by the stateless `interpret` (what a live MCP seat uses to find
//! the ending) must end the turn the same way.

use serde_json::{Map, Value};
use sharedos_drivers::child_process::ProcessLimits;
use sharedos_drivers::frame::HarnessStep;
use sharedos_drivers::live::{read_stream_from, CallOrigin, IgnoredKind, LiveOutcome, StreamReading};
use sharedos_drivers::vendor::{Vendor, VendorWire};
use std::collections::BTreeSet;
use std::path::Path;

use Ending::{Complete, Failed, NoOutcome};

/// How a real stream must end.
#[derive(Debug, Clone, Copy)]
enum Ending {
    /// Completed, with this answer.
    Complete(&'static str),
    /// Failed with this code, retryable or not; the message contains the
    /// fragment.
    Failed(&'static str, &'static str, Retry),
    /// The stream stopped before any ending.
    NoOutcome,
}

/// Whether a failure may be run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    Retryable,
    Final,
}

use Retry::{Final, Retryable};

/// One committed stream and its reading.
struct Case {
    file: &'static str,
    ending: Ending,
    /// Every observed call, in stream order, as `tool=status` (`=` alone
    /// for a call whose end the stream never told).
    calls: &'static [&'static str],
}

const fn case(file: &'static str, ending: Ending, calls: &'static [&'static str]) -> Case {
    Case { file, ending, calls }
}

/// The reading `decode` gives: the vendor's live reader over the bytes.
fn read(vendor: Vendor, path: &Path) -> StreamReading {
    let mut reader = vendor.live_reader();
    let file = std::fs::File::open(path).unwrap();
    read_stream_from(reader.as_mut(), file, ProcessLimits::default().max_line_bytes).unwrap()
}

/// Reads every `.jsonl` file of `folder` and checks it against its case;
/// returns how many files were read.
fn check_folder(vendor: Vendor, folder: &str, cases: &[Case]) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/streams").join(folder);
    let mut on_disk: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    on_disk.sort();
    let listed: BTreeSet<&str> = cases.iter().map(|case| case.file).collect();
    assert_eq!(listed.len(), cases.len(), "{folder}: a file is listed twice");
    assert_eq!(
        on_disk.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        listed,
        "{folder}: the files on disk and the cases differ"
    );
    let mut read_files = 0;
    for case in cases {
        let path = root.join(case.file);
        let reading = read(vendor, &path);
        check_reading(vendor, &path, case, &reading);
        read_files += 1;
    }
    read_files
}

fn check_reading(vendor: Vendor, path: &Path, case: &Case, reading: &StreamReading) {
    let name = path.display();
    let calls: Vec<String> = reading
        .steps
        .iter()
        .filter_map(|step| match &step.step {
            HarnessStep::ToolCall { tool, .. } => {
                assert_eq!(step.origin, Some(CallOrigin::RanByCli), "{name}: line {}", step.line);
                let status = step.status.map(|status| serde_json::to_value(status).unwrap());
                Some(format!("{tool}={}", status.as_ref().and_then(Value::as_str).unwrap_or_default()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), case.calls.len(), "{name}: observed calls {calls:?}");
    assert_eq!(calls, case.calls, "{name}: observed calls");
    for kind in [IgnoredKind::Unknown, IgnoredKind::Malformed, IgnoredKind::NotJson, IgnoredKind::NotObject] {
        assert_eq!(reading.ignored.get(&kind), None, "{name}: {kind:?} lines in {:?}", reading.ignored);
    }
    let line = match (&reading.outcome, case.ending) {
        (LiveOutcome::Complete { output, line }, Complete(answer)) => {
            assert_eq!(output, &serde_json::json!({ "text": answer }), "{name}");
            *line
        }
        (LiveOutcome::Failed { code, message, retryable, line }, Failed(want_code, fragment, retry)) => {
            assert_eq!(code, want_code, "{name}: {message}");
            assert_eq!(*retryable, retry == Retryable, "{name}: {code} retryable");
            assert!(message.contains(fragment), "{name}: {message:?} lacks {fragment:?}");
            *line
        }
        (LiveOutcome::NoOutcome, NoOutcome) => return,
        (outcome, ending) => panic!("{name}: read {outcome:?}, expected {ending:?}"),
    };
    check_terminal_line_alone(vendor, path, line, case.ending);
}

/// The terminal line read by `interpret` alone ends the turn the same way
/// (a Codex or Pi completion read alone carries no answer: the live reader
/// adds the remembered one).
fn check_terminal_line_alone(vendor: Vendor, path: &Path, line: usize, ending: Ending) {
    let text = std::fs::read_to_string(path).unwrap();
    let frame: Map<String, Value> = serde_json::from_str(text.split('\n').nth(line - 1).unwrap()).unwrap();
    let steps = vendor.protocol().interpret(&frame);
    let name = path.display();
    match (steps.last(), ending) {
        (Some(HarnessStep::Complete { .. }), Complete(_)) => {}
        (Some(HarnessStep::Failed { error }), Failed(code, _, retry)) => {
            assert_eq!(error.code, code, "{name}");
            assert_eq!(error.retryable == Some(true), retry == Retryable, "{name}: {code} retryable");
        }
        (step, ending) => panic!("{name}: line {line} read alone gives {step:?}, expected {ending:?}"),
    }
}

// ---------------------------------------------------------------- Codex

/// `codex exec --json`, codex-cli 0.169.0.
const CODEX_0_169_0: &[Case] = &[
    case("complete.jsonl", Complete("All done."), &[]),
    case("call-ok.jsonl", Complete("Done after 1 tool call(s)."), &["files.read=ran"]),
    case("refused-call.jsonl", Complete("Done after 1 tool call(s)."), &["files.delete=ran"]),
    case("escalate.jsonl", Complete("Done after 1 tool call(s)."), &["sharedos.escalate=ran"]),
    case(
        "model-error-400.jsonl",
        Failed("harness_failed", "scripted failure: the model refused this turn", Retryable),
        &[],
    ),
    case(
        "max-tokens.jsonl",
        Failed("harness_failed", "Incomplete response returned, reason: max_output_tokens", Retryable),
        &[],
    ),
    case("hang-up.jsonl", Failed("harness_failed", "stream closed before response.completed", Retryable), &[]),
    case(
        "hang-up-after-retries.jsonl",
        Failed("harness_failed", "stream closed before response.completed", Retryable),
        &[],
    ),
    case("idle-timeout.jsonl", Failed("harness_failed", "idle timeout waiting for SSE", Retryable), &[]),
    case("unknown-tool.jsonl", Complete("Done after 1 tool call(s)."), &[]),
    case("builtin-tool-off.jsonl", Complete("Done after 1 tool call(s)."), &[]),
    case("tool-timeout.jsonl", Complete("Done after 1 tool call(s)."), &["files.read=timed_out"]),
    case("approval-refused.jsonl", Complete("Done after 1 tool call(s)."), &["files.read=refused_by_cli"]),
    case("killed-mid-stall.jsonl", NoOutcome, &[]),
    case("builtin-shell-default-flags.jsonl", Complete("Done after 1 tool call(s)."), &["command_execution=ran"]),
];

#[test]
fn codex_0_169_0_real_streams_read_as_the_cli_ended_them() {
    assert_eq!(check_folder(Vendor::Codex, "codex/real-0.169.0", CODEX_0_169_0), 15);
}

// ---------------------------------------------------------------- Claude Code

/// `claude -p --output-format stream-json --verbose … --bare`, Claude Code
/// 2.1.328.
const CLAUDE_CODE_2_1_328: &[Case] = &[
    case("complete.jsonl", Complete("All done."), &[]),
    case("call-ok.jsonl", Complete("Read it. Done."), &["mcp__sharedos__files_read=ran"]),
    case("refused-call.jsonl", Complete("The delete was refused."), &["mcp__sharedos__files_delete=ran"]),
    case("escalate.jsonl", Complete("Escalated to a human."), &["mcp__sharedos__sharedos_escalate=ran"]),
    case("model-error-400.jsonl", Failed("api_error_400", "API Error: 400 scripted failure", Final), &[]),
    case(
        "max-turns.jsonl",
        Failed("error_max_turns", "Reached maximum number of turns (2)", Final),
        &["mcp__sharedos__files_read=ran", "mcp__sharedos__files_read=ran"],
    ),
    case("max-tokens.jsonl", Failed("max_output_tokens", "exceeded the 128000 output token maximum", Final), &[]),
    case(
        "hang-up.jsonl",
        Failed("connection_failed", "Connection to the API was lost (StreamTruncated)", Retryable),
        &[],
    ),
    case(
        "hang-up-nonstreaming-fallback.jsonl",
        Failed("connection_failed", "Connection dropped (ECONNRESET)", Retryable),
        &[],
    ),
    case("unknown-tool.jsonl", Complete("That tool does not exist."), &["mcp__sharedos__files_nope=unknown_tool"]),
    case("builtin-tool-off.jsonl", Complete("No shell."), &["Bash=unknown_tool"]),
    case("tool-timeout.jsonl", Complete("The tool timed out."), &["mcp__sharedos__files_slow=timed_out"]),
    case("permission-denied.jsonl", Complete("done"), &["mcp__sharedos__files_read=refused_by_cli"]),
    case("interrupted-sigint.jsonl", Failed("error_during_execution", "[ede_diagnostic]", Retryable), &[]),
    case("killed-sigterm.jsonl", NoOutcome, &[]),
];

#[test]
fn claude_code_2_1_328_real_streams_read_as_the_cli_ended_them() {
    assert_eq!(check_folder(Vendor::ClaudeCode, "claude-code/real-2.1.328", CLAUDE_CODE_2_1_328), 15);
}

// ---------------------------------------------------------------- Pi

/// `pi --mode rpc`, Pi 0.73.1 with the harness's MCP adapter.
const PI_0_73_1: &[Case] = &[
    case("complete.jsonl", Complete("All done."), &[]),
    case("call-ok.jsonl", Complete("Read it."), &["sharedos_files_read=ran"]),
    case("refused-call.jsonl", Complete("It was refused."), &["sharedos_files_delete=ran"]),
    case("escalate.jsonl", Complete("Escalated."), &["sharedos_sharedos_escalate=ran"]),
    case("model-error-400.jsonl", Failed("harness_failed", "scripted failure: the turn failed", Retryable), &[]),
    case("max-tokens.jsonl", Failed("harness_turn_max_tokens", "cut short by its token limit", Final), &[]),
    case("hang-up.jsonl", Failed("harness_failed", "terminated", Retryable), &[]),
    case("hang-up-eof.jsonl", Failed("harness_failed", "Anthropic stream ended before message_stop", Retryable), &[]),
    case("hang-up-retries.jsonl", Failed("harness_failed", "terminated", Retryable), &[]),
    case("overloaded-retries.jsonl", Failed("harness_failed", "overloaded_error", Retryable), &[]),
    case("closed-mid-retry.jsonl", NoOutcome, &[]),
    case("unknown-tool.jsonl", Complete("No bash here."), &["bash=unknown_tool"]),
    case("tool-timeout.jsonl", Complete("Slow done."), &["sharedos_slow_wait=timed_out"]),
    case("aborted-stall.jsonl", Failed("harness_turn_aborted", "This operation was aborted", Retryable), &[]),
    case(
        "aborted-tool.jsonl",
        Failed("harness_turn_aborted", "Request was aborted.", Retryable),
        &["sharedos_slow_wait=failed"],
    ),
    case("killed-mid-stall.jsonl", NoOutcome, &[]),
];

#[test]
fn pi_0_73_1_real_streams_read_as_the_cli_ended_them() {
    assert_eq!(check_folder(Vendor::Pi, "pi/real-0.73.1", PI_0_73_1), 16);
}
