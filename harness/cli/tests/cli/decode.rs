//! `decode` as a vendor runs it: a captured stream in, JSON Lines out.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn decode(vendor: &str, input: &[u8]) -> (i32, Vec<Value>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args(["decode", "--vendor", vendor, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    let lines =
        String::from_utf8(output.stdout).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    (output.status.code().unwrap(), lines)
}

#[test]
fn a_codex_run_decodes_to_its_steps_outcome_and_ignored_counts() {
    let stream = concat!(
        "{\"type\":\"thread.started\",\"thread_id\":\"th_1\"}\n",
        "{\"type\":\"turn.started\"}\n",
        "\n",
        "not json\n",
        "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"Done.\"}}\n",
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
    );
    let (code, lines) = decode("codex", stream.as_bytes());
    assert_eq!(code, 0);
    let outcome = lines.iter().find(|l| l["kind"] == "outcome").unwrap();
    assert_eq!(outcome["outcome"]["type"], "complete");
    assert_eq!(outcome["outcome"]["line"], 6);
    let ignored = &lines.last().unwrap()["counts"];
    assert_eq!(ignored["blank"], 1);
    assert_eq!(ignored["not_json"], 1);
    let message = lines.iter().find(|l| l["kind"] == "step").unwrap();
    assert_eq!(message["line"], 5);
    assert_eq!(message["step"]["type"], "message");
}

#[test]
fn arbitrary_bytes_decode_without_a_panic_for_every_vendor() {
    let garbage: &[u8] = b"\xff\xfe{\"type\":\n[1,2]\nnull\n{\"type\":\"result\",\"subtype\":";
    for vendor in ["codex", "claude-code", "deepseek", "pi"] {
        let (code, lines) = decode(vendor, garbage);
        assert_eq!(code, 0, "{vendor}");
        assert_eq!(lines.last().unwrap()["kind"], "ignored", "{vendor}");
        assert_eq!(lines[lines.len() - 2]["outcome"]["type"], "no_outcome", "{vendor}");
    }
}

#[test]
fn an_unreadable_input_is_invalid_input() {
    let output = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args(["decode", "--vendor", "pi", "/nonexistent/stream.jsonl"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/stream.jsonl"));
}

#[test]
fn a_line_over_the_frame_cap_is_counted_and_skipped_and_the_rest_decodes() {
    let mut stream = "x".repeat(5 * 1024 * 1024);
    stream.push('\n');
    stream.push_str("{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n");
    let (code, lines) = decode("codex", stream.as_bytes());
    assert_eq!(code, 0);
    let outcome = lines.iter().find(|l| l["kind"] == "outcome").unwrap();
    assert_eq!(outcome["outcome"]["line"], 2);
    let counts = &lines.last().unwrap()["counts"];
    assert_eq!((counts["oversized"].as_u64(), counts["not_json"].as_u64()), (Some(1), Some(0)));
}

#[test]
fn a_fifo_is_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("stream");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let output = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args(["decode", "--vendor", "codex"])
        .arg(&fifo)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a regular file"));
}

/// Issue 29, exit codes: a stdout that cannot be written (a full disk) is
/// an I/O failure (74), not a bug of the harness (70).
#[test]
fn a_full_stdout_is_an_io_failure() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"))
        .args(["decode", "--vendor", "codex", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let line = br#"{"type":"thread.started","thread_id":"t"}"#;
    child.stdin.take().unwrap().write_all(&[&line[..], b"\n"].concat()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(74), "{}", String::from_utf8_lossy(&output.stderr));
}
