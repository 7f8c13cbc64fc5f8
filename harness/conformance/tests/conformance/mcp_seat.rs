//! Live MCP seat files: what they may and may not say, each refusal at its
//! pointer, and every committed seat file valid against the seat schema.

use crate::support::suite_root;
use serde_json::Value;
use sharedos_drivers::vendor::Vendor;
use sharedos_grading::input::error::LoadErrorKind;
use sharedos_grading::input::loader::parse_seat;
use sharedos_grading::input::seat::{McpTransport, ProcessScope, SeatModel};
use sharedos_process::message::Clock;
use std::path::Path;
use std::time::Duration;

fn parse(text: &str) -> Result<sharedos_grading::input::seat::Seat, (LoadErrorKind, String)> {
    parse_seat(Path::new("live.json"), Path::new("/tmp"), text).map_err(|e| (e.kind, e.pointer))
}

#[test]
fn an_mcp_seat_defaults_to_its_vendors_cli_over_http_with_a_token_on_a_real_clock_per_turn() {
    let seat = parse(r#"{"name": "claude", "label": "Claude", "kind": "mcp", "vendor": "claude-code"}"#).unwrap();
    assert_eq!(seat.column_id, "mcp:claude");
    assert_eq!(seat.launch.command, "claude");
    assert_eq!((seat.launch.clock, seat.process), (Clock::Real, ProcessScope::PerTurn));
    assert!(seat.on_real_clock(), "a real-clock column has no golden files");
    let mcp = seat.mcp.unwrap();
    assert_eq!((mcp.vendor, mcp.transport, mcp.token), (Vendor::ClaudeCode, McpTransport::Http, true));
    assert_eq!(mcp.idle_timeout, Duration::from_secs(120));
    let named = parse(
        r#"{"name": "c", "label": "C", "kind": "mcp", "vendor": "codex", "command": "/opt/codex", "transport": "stdio",
            "token": false, "limits": {"idleTimeoutMs": 50}}"#,
    )
    .unwrap();
    assert_eq!(named.launch.command, "/opt/codex");
    let mcp = named.mcp.unwrap();
    assert_eq!((mcp.transport, mcp.token, mcp.idle_timeout), (McpTransport::Stdio, false, Duration::from_millis(50)));
}

#[test]
fn what_an_mcp_seat_cannot_say_is_refused_at_its_pointer() {
    let mcp = |rest: &str| parse(&format!(r#"{{"name": "m", "label": "M", "kind": "mcp"{rest}}}"#)).unwrap_err();
    assert_eq!(mcp(""), (LoadErrorKind::OutOfBounds, "/vendor".into()));
    assert_eq!(mcp(r#", "vendor": "gemini""#), (LoadErrorKind::UnknownValue, "/vendor".into()));
    assert_eq!(mcp(r#", "vendor": "pi", "cwd": "x""#), (LoadErrorKind::OutOfBounds, "/cwd".into()));
    assert_eq!(mcp(r#", "vendor": "pi", "clock": "virtual""#), (LoadErrorKind::OutOfBounds, "/clock".into()));
    assert_eq!(mcp(r#", "vendor": "pi", "process": "per-run""#), (LoadErrorKind::OutOfBounds, "/process".into()));
    assert_eq!(mcp(r#", "vendor": "pi", "transport": "sse""#).0, LoadErrorKind::UnknownValue);
    let idle = mcp(r#", "vendor": "pi", "limits": {"idleTimeoutMs": 0}"#);
    assert_eq!(idle, (LoadErrorKind::OutOfBounds, "/limits".into()));
}

#[test]
fn what_only_an_mcp_seat_has_is_refused_on_a_process_seat() {
    let process = |rest: &str| {
        parse(&format!(r#"{{"name": "p", "label": "P", "kind": "prompted", "command": "python3"{rest}}}"#)).unwrap_err()
    };
    assert_eq!(process(r#", "vendor": "pi""#), (LoadErrorKind::OutOfBounds, "/vendor".into()));
    assert_eq!(process(r#", "transport": "http""#), (LoadErrorKind::OutOfBounds, "/transport".into()));
    assert_eq!(process(r#", "token": true"#), (LoadErrorKind::OutOfBounds, "/token".into()));
    assert_eq!(
        process(r#", "limits": {"idleTimeoutMs": 5}"#),
        (LoadErrorKind::OutOfBounds, "/limits/idleTimeoutMs".into())
    );
    let commandless = parse(r#"{"name": "p", "label": "P", "kind": "scripted"}"#).unwrap_err();
    assert_eq!(commandless, (LoadErrorKind::OutOfBounds, "/command".into()));
}

/// The seat files in one folder under `harness/seats/`, sorted.
fn seat_files_in(folder: &str) -> Vec<std::path::PathBuf> {
    let dir = suite_root().join("harness/seats").join(folder);
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// Every seat file committed: the reference runtime's, the live examples
/// under `harness/seats/live/`, and the pinned CLIs' under `vendors/`.
fn committed_seat_files() -> Vec<std::path::PathBuf> {
    let mut files = vec![suite_root().join("harness/seats/python-reference.json")];
    let live = seat_files_in("live");
    assert_eq!(live.len(), 4, "one live example per vendor");
    let vendors = seat_files_in("vendors");
    assert_eq!(vendors.len(), 3, "one seat per pinned CLI");
    files.extend(live);
    files.extend(vendors);
    files
}

#[test]
fn the_pinned_clis_seats_use_the_scripted_model_and_the_clis_under_vendors() {
    let vendors = seat_files_in("vendors");
    assert_eq!(vendors.len(), 3);
    for file in vendors {
        let seat = parse_seat(&file, file.parent().unwrap(), &std::fs::read_to_string(&file).unwrap()).unwrap();
        let mcp = seat.mcp.as_ref().unwrap();
        assert_eq!(mcp.model, SeatModel::Scripted, "{}", file.display());
        let command = Path::new(&seat.launch.command);
        assert!(command.is_absolute(), "a CLI path is read from the seat's folder: {}", command.display());
        let pinned = Path::new("vendors/node_modules/.bin").join(mcp.vendor.executable());
        assert!(command.ends_with(&pinned), "{} is the pinned CLI", command.display());
        // The harness chooses the CLI's PATH; the seat passes nothing of the user's.
        assert!(seat.launch.env.is_empty(), "nothing of the user's: {:?}", seat.launch.env.keys());
    }
}

#[test]
fn every_committed_seat_file_loads_and_follows_the_seat_schema() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(suite_root().join("harness/seats/seat.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for file in committed_seat_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
        parse_seat(&file, file.parent().unwrap(), &text).unwrap();
    }
    let refused = [
        r#"{"name": "m", "label": "M", "kind": "mcp"}"#,
        r#"{"name": "m", "label": "M", "kind": "mcp", "vendor": "pi", "clock": "virtual"}"#,
        r#"{"name": "p", "label": "P", "kind": "scripted", "command": "x", "vendor": "pi"}"#,
        r#"{"name": "p", "label": "P", "kind": "scripted"}"#,
        r#"{"name": "p", "label": "P", "kind": "scripted", "command": "x", "model": "scripted"}"#,
        r#"{"name": "m", "label": "M", "kind": "mcp", "vendor": "pi", "model": "a-model"}"#,
    ];
    for text in refused {
        let value: Value = serde_json::from_str(text).unwrap();
        assert!(!validator.is_valid(&value), "the schema refuses what the loader refuses: {text}");
        assert!(parse(text).is_err(), "{text}");
    }
}
