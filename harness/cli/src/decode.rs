//! `decode`: how the harness reads a vendor CLI's captured stream.
//!
//! Output, one JSON object per line: every extracted step
//! (`{"kind":"step","line":N,"step":{…},"ranByCli":bool,"status":…,"error":…}`;
//! `ranByCli` only on tool calls, `status` on a call the CLI ran once the
//! stream told what became of it — `ran`, `refused_by_cli`, `timed_out`,
//! `unknown_tool` or `failed` — and `error` with the text that came with
//! it), then `{"kind":"outcome","outcome":{…}}`, then
//! `{"kind":"ignored","counts":{…}}` with every ignored kind present.

use crate::args::{DecodeArgs, VendorArg};
use crate::exit::Exit;
use serde_json::{json, Map, Value};
use sharedos_drivers::child_process::ProcessLimits;
use sharedos_drivers::live::{read_stream_from, CallOrigin, IgnoredKind, LiveStreamReader, StreamReading};
use sharedos_drivers::vendor::{Vendor, VendorWire};
use std::io::Write;

fn vendor(arg: VendorArg) -> Vendor {
    match arg {
        VendorArg::Codex => Vendor::Codex,
        VendorArg::ClaudeCode => Vendor::ClaudeCode,
        VendorArg::Deepseek => Vendor::DeepSeek,
        VendorArg::Pi => Vendor::Pi,
    }
}

/// Runs `decode`. An unreadable input (or one that is not a regular file
/// or standard input) is invalid input (exit 3); any bytes that can be
/// read decode, invalid UTF-8 being replaced, a line over the live
/// transport's cap (4 MiB) counted `oversized` and skipped unread.
pub fn decode(args: &DecodeArgs) -> Exit {
    let mut reader = vendor(args.vendor).live_reader();
    let reading = match read_input(args, reader.as_mut()) {
        Ok(reading) => reading,
        Err(error) => {
            tell!("error: failed to read {}: {error}", args.input.display());
            return Exit::InvalidInput;
        }
    };
    let mut out = std::io::stdout().lock();
    match write_lines(&mut out, &reading) {
        Ok(()) => Exit::Success,
        // A closed pipe (`| head`) is the reader's choice, not a failure.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Exit::Success,
        // A full disk or a closed device: a write that failed, not a bug.
        Err(error) => {
            tell!("error: failed to write the decoded stream: {error}");
            Exit::Io
        }
    }
}

/// Streams the input through `reader` with the live transport's line cap,
/// so no input is held whole however long its lines.
fn read_input(args: &DecodeArgs, reader: &mut dyn LiveStreamReader) -> std::io::Result<StreamReading> {
    let cap = ProcessLimits::default().max_line_bytes;
    if args.input.as_os_str() == "-" {
        read_stream_from(reader, std::io::stdin().lock(), cap)
    } else {
        // Opening a FIFO would wait for a writer: look before opening.
        if !std::fs::metadata(&args.input)?.is_file() {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
        }
        read_stream_from(reader, std::fs::File::open(&args.input)?, cap)
    }
}

/// The JSON Lines of one reading, in stream order.
#[must_use]
pub fn decoded_lines(reading: &StreamReading) -> Vec<Value> {
    let mut lines = Vec::with_capacity(reading.steps.len() + 2);
    for step in &reading.steps {
        let mut line = json!({ "kind": "step", "line": step.line, "step": step.step });
        if let (Some(origin), Value::Object(map)) = (step.origin, &mut line) {
            map.insert("ranByCli".to_string(), Value::Bool(origin == CallOrigin::RanByCli));
            if let Some(status) = step.status {
                map.insert("status".to_string(), json!(status));
            }
            if let Some(error) = &step.error {
                map.insert("error".to_string(), json!(error));
            }
        }
        lines.push(line);
    }
    lines.push(json!({ "kind": "outcome", "outcome": reading.outcome }));
    let mut counts = Map::new();
    // Every kind, so the counts line always has the same keys.
    for kind in IgnoredKind::ALL {
        let name = serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_string));
        if let Some(name) = name {
            counts.insert(name, json!(reading.ignored.get(&kind).copied().unwrap_or(0)));
        }
    }
    lines.push(json!({ "kind": "ignored", "counts": counts }));
    lines
}

fn write_lines(out: &mut impl Write, reading: &StreamReading) -> std::io::Result<()> {
    for line in decoded_lines(reading) {
        writeln!(out, "{line}")?;
    }
    out.flush()
}
