//! The stand-in's behaviours, in the order they run: environment and
//! grandchild reports, the stderr flood, the replay, then the ending.

use crate::{Args, Flood};
use serde_json::{json, Map, Value};
use std::io::{self, BufRead, Write};
use std::time::Duration;

/// Status of `--exit-mid-turn`.
const MID_TURN_STATUS: u8 = 3;

/// The line that separates batches in a stream file.
const BATCH_SEPARATOR: &str = "---";

/// Runs every behaviour `args` asks for; returns the exit status.
pub fn run(args: &Args) -> Result<u8, String> {
    let batches = match &args.stream {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("read {}: {e}", path.display()))?;
            split_batches(&text)
        }
        None => Vec::new(),
    };
    let mut out = io::stdout().lock();
    if args.print_env {
        let env: Map<String, Value> = std::env::vars_os()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), Value::String(v.to_string_lossy().into_owned())))
            .collect();
        write_line(&mut out, &json!({"standin": "env", "env": env}).to_string())?;
    }
    if args.spawn_grandchild {
        let pid = spawn_grandchild()?;
        write_line(&mut out, &json!({"standin": "grandchild", "pid": pid}).to_string())?;
    }
    if let Some(bytes) = args.stderr_flood {
        flood_stderr(bytes)?;
    }
    if !replay(args, &batches, &mut out)? {
        return Ok(0);
    }
    finish(args, &mut out)
}

/// Splits a stream file into batches of lines.
fn split_batches(text: &str) -> Vec<Vec<String>> {
    let mut batches = vec![Vec::new()];
    for line in text.lines() {
        if line == BATCH_SEPARATOR {
            batches.push(Vec::new());
        } else if let Some(batch) = batches.last_mut() {
            batch.push(line.to_string());
        }
    }
    batches
}

/// Writes the batches; returns false when `--answer` found stdin closed.
fn replay(args: &Args, batches: &[Vec<String>], out: &mut impl Write) -> Result<bool, String> {
    let stdin = io::stdin();
    let last_batch = batches.len().saturating_sub(1);
    for (index, batch) in batches.iter().enumerate() {
        if args.answer {
            let mut line = String::new();
            let read = stdin.lock().read_line(&mut line).map_err(|e| format!("read stdin: {e}"))?;
            if read == 0 {
                return Ok(false);
            }
            if args.echo_stdin {
                write_line(out, &received(line.trim_end_matches(['\n', '\r'])).to_string())?;
            }
        }
        for (position, line) in batch.iter().enumerate() {
            let last = index == last_batch && position + 1 == batch.len();
            if last && args.truncate_last {
                let cut = line.char_indices().nth(line.chars().count() / 2).map_or(0, |(at, _)| at);
                out.write_all(&line.as_bytes()[..cut]).map_err(|e| format!("write stdout: {e}"))?;
                out.flush().map_err(|e| format!("write stdout: {e}"))?;
            } else {
                write_line(out, line)?;
            }
        }
    }
    Ok(true)
}

/// The `{"standin":"received"}` frame for one stdin line.
fn received(line: &str) -> Value {
    let parsed = serde_json::from_str::<Value>(line).unwrap_or_else(|_| Value::String(line.to_string()));
    json!({"standin": "received", "line": parsed})
}

/// What happens after the replay.
fn finish(args: &Args, out: &mut impl Write) -> Result<u8, String> {
    if args.hang {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    if let Some(flood) = args.flood {
        return flood_stdout(flood, out);
    }
    if args.exit_mid_turn {
        return Ok(MID_TURN_STATUS);
    }
    Ok(0)
}

/// Writes forever; ends only when the reader goes away.
fn flood_stdout(flood: Flood, out: &mut impl Write) -> Result<u8, String> {
    let chunk = match flood {
        Flood::Lines => "not json at all\n".repeat(256),
        Flood::Huge => "x".repeat(64 * 1024),
        Flood::Frames => "{\"type\":\"progress\",\"note\":\"still working\"}\n".repeat(128),
    };
    loop {
        out.write_all(chunk.as_bytes()).map_err(|e| format!("write stdout: {e}"))?;
        out.flush().map_err(|e| format!("write stdout: {e}"))?;
    }
}

/// Writes `bytes` bytes of numbered lines to stderr.
fn flood_stderr(bytes: u64) -> Result<(), String> {
    let mut err = io::stderr().lock();
    let mut written = 0_u64;
    let mut number = 0_u64;
    while written < bytes {
        let line = format!("stderr line {number:08} of a chatty harness\n");
        let take = usize::try_from((bytes - written).min(line.len() as u64)).unwrap_or(line.len());
        err.write_all(&line.as_bytes()[..take]).map_err(|e| format!("write stderr: {e}"))?;
        written += take as u64;
        number += 1;
    }
    err.flush().map_err(|e| format!("write stderr: {e}"))
}

/// Starts a hanging copy of this program that keeps stdout open.
fn spawn_grandchild() -> Result<u32, String> {
    let program = std::env::current_exe().map_err(|e| format!("find the stand-in's own path: {e}"))?;
    let child = std::process::Command::new(program)
        .arg("--hang")
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("start a grandchild: {e}"))?;
    Ok(child.id())
}

fn write_line(out: &mut impl Write, line: &str) -> Result<(), String> {
    out.write_all(line.as_bytes()).map_err(|e| format!("write stdout: {e}"))?;
    out.write_all(b"\n").map_err(|e| format!("write stdout: {e}"))?;
    out.flush().map_err(|e| format!("write stdout: {e}"))
}
