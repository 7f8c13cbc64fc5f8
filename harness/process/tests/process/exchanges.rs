//! Every example exchange of `PROTOCOL.md` (a fenced block tagged
//! `exchange`) is played against both reference runtimes, line by line:
//! each `>` line is written to the runtime as the harness would write it,
//! and each `<` line is what the runtime must write next. So the document
//! cannot drift from what the runtimes do.
//!
//! In a `<` line, the string `"…"` stands for any value (and for the key
//! being absent), and `"$name"` for the value the runtime chose there (a
//! request id), which later lines, `>` ones included, repeat. Every line
//! either side writes must also follow its direction's JSON Schema.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a runtime may take to write a line before the test gives up:
/// a guard against hanging, never a measure.
const WATCHDOG: Duration = Duration::from_secs(20);

/// The reference runtimes, as their seat files start them.
const RUNTIMES: [(&str, &str, &str); 2] =
    [("python", "python3", "reference/runtime.py"), ("node", "node", "reference-node/runtime.mjs")];

const HELLO: &str = r#"{"type":"hello","protocol":"sharedos-runtime/2","harness":{"name":"sharedos-conformance","version":"0.1.0"},"clock":"virtual"}"#;

/// One line of an exchange: written by the harness, or expected of the runtime.
#[derive(Debug, Clone)]
enum Line {
    Harness(Value),
    Runtime(Value),
}

/// An exchange: the heading it stands under, and its lines.
#[derive(Debug)]
struct Exchange {
    heading: String,
    lines: Vec<Line>,
}

fn document() -> String {
    std::fs::read_to_string(format!("{}/PROTOCOL.md", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The document's exchanges, in order.
fn exchanges() -> Vec<Exchange> {
    let mut found = Vec::new();
    let (mut heading, mut open): (String, Option<Vec<Line>>) = (String::new(), None);
    // A block may stand indented in a list item.
    for text in document().lines().map(str::trim) {
        if let Some(title) = text.strip_prefix("## ").or_else(|| text.strip_prefix("### ")) {
            heading = title.to_string();
        }
        match (&mut open, text) {
            (None, "```exchange") => open = Some(Vec::new()),
            (Some(lines), "```") => {
                found.push(Exchange { heading: heading.clone(), lines: std::mem::take(lines) });
                open = None;
            }
            (Some(lines), text) if !text.trim().is_empty() => {
                let (direction, json) = text.split_at(1);
                let value: Value = serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{text}: {e}"));
                lines.push(match direction {
                    ">" => Line::Harness(value),
                    "<" => Line::Runtime(value),
                    other => panic!("an exchange line starts with `>` or `<`, not `{other}`: {text}"),
                });
            }
            _ => {}
        }
    }
    found
}

/// Whether `actual` is what `expected` says, binding each `"$name"` the
/// first time it is met; `Err` says where they part.
fn matches(expected: &Value, actual: &Value, bound: &mut BTreeMap<String, Value>, at: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::String(any), _) if any == "…" => Ok(()),
        (Value::String(name), _) if name.starts_with('$') => match bound.get(name) {
            Some(value) if value == actual => Ok(()),
            Some(value) => Err(format!("{at}: {name} is {value}, not {actual}")),
            None => {
                bound.insert(name.clone(), actual.clone());
                Ok(())
            }
        },
        (Value::Object(expected), Value::Object(actual)) => {
            for (key, value) in expected {
                match actual.get(key) {
                    Some(got) => matches(value, got, bound, &format!("{at}/{key}"))?,
                    None if value == "…" => {}
                    None => return Err(format!("{at}/{key}: missing")),
                }
            }
            match actual.keys().find(|key| !expected.contains_key(*key)) {
                Some(extra) => Err(format!("{at}/{extra}: not expected")),
                None => Ok(()),
            }
        }
        (Value::Array(expected), Value::Array(actual)) if expected.len() == actual.len() => expected
            .iter()
            .zip(actual)
            .enumerate()
            .try_for_each(|(i, (e, a))| matches(e, a, bound, &format!("{at}/{i}"))),
        _ if expected == actual => Ok(()),
        _ => Err(format!("{at}: expected {expected}, got {actual}")),
    }
}

/// `value` with every bound `"$name"` replaced by what the runtime chose.
fn substitute(value: &Value, bound: &BTreeMap<String, Value>) -> Value {
    match value {
        Value::String(name) if name.starts_with('$') => {
            bound.get(name).cloned().unwrap_or_else(|| panic!("{name} is used before the runtime chose it"))
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), substitute(v, bound))).collect::<Map<String, Value>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, bound)).collect()),
        other => other.clone(),
    }
}

fn validator(name: &str) -> jsonschema::Validator {
    let path = format!("{}/../metadata/schemas/{name}", env!("CARGO_MANIFEST_DIR"));
    jsonschema::validator_for(&serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()).unwrap()
}

/// Plays `exchange` against one runtime; `Err` says which line parted.
fn play(program: &str, script: &str, exchange: &Exchange) -> Result<(), String> {
    let seats = format!("{}/../seats", env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(program)
        .arg(script)
        .current_dir(&seats)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("start {program}: {e}"))?;
    let (lines, receive) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let (harness_schema, runtime_schema) =
        (validator("harness-message.schema.json"), validator("runtime-message.schema.json"));
    let mut bound = BTreeMap::new();
    let played = (|| {
        writeln!(stdin, "{HELLO}").map_err(|e| e.to_string())?;
        let ready = receive.recv_timeout(WATCHDOG).map_err(|_| "no ready".to_string())?;
        if !ready.contains(r#""protocol":"sharedos-runtime/2""#) {
            return Err(format!("ready: {ready}"));
        }
        for (n, line) in exchange.lines.iter().enumerate() {
            match line {
                Line::Harness(value) => {
                    let value = substitute(value, &bound);
                    if !harness_schema.is_valid(&value) {
                        return Err(format!("line {}: the harness would not write {value}", n + 1));
                    }
                    writeln!(stdin, "{value}").map_err(|e| format!("line {}: {e}", n + 1))?;
                }
                Line::Runtime(expected) => {
                    let got = receive.recv_timeout(WATCHDOG).map_err(|_| format!("line {}: nothing written", n + 1))?;
                    let actual: Value =
                        serde_json::from_str(&got).map_err(|e| format!("line {}: {got}: {e}", n + 1))?;
                    if !runtime_schema.is_valid(&actual) {
                        return Err(format!("line {}: {got} does not follow the runtime schema", n + 1));
                    }
                    matches(expected, &actual, &mut bound, "")
                        .map_err(|e| format!("line {}: {e}; wrote {got}", n + 1))?;
                }
            }
        }
        drop(stdin);
        match receive.recv_timeout(WATCHDOG) {
            Ok(extra) => Err(format!("after the exchange it wrote {extra}")),
            Err(mpsc::RecvTimeoutError::Timeout) => Err("it did not exit once its input closed".to_string()),
            Err(mpsc::RecvTimeoutError::Disconnected) => Ok(()),
        }
    })();
    if played.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let _ = reader.join();
    played?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("it exited {status}"))
    }
}

#[test]
fn every_example_exchange_in_the_document_is_what_both_reference_runtimes_do() {
    let exchanges = exchanges();
    assert_eq!(exchanges.len(), 6, "the document's exchanges, one per point they settle and a whole turn");
    let mut wrong = Vec::new();
    for exchange in &exchanges {
        for (name, program, script) in RUNTIMES {
            if let Err(why) = play(program, script, exchange) {
                wrong.push(format!("{name}, the exchange under \"{}\": {why}", exchange.heading));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The matching the exchanges rely on: a wildcard may stand for an absent
/// key, a name binds once and must then repeat, and nothing unexpected
/// passes.
#[test]
fn an_exchange_line_matches_only_what_it_says() {
    let line = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    let mut bound = BTreeMap::new();
    let expected = line(r#"{"type":"emit","id":"$e","event":"…","extra":"…"}"#);
    assert!(matches(&expected, &line(r#"{"type":"emit","id":"e1","event":{"a":1}}"#), &mut bound, "").is_ok());
    assert_eq!(bound["$e"], "e1");
    assert!(matches(&line(r#"{"id":"$e"}"#), &line(r#"{"id":"e2"}"#), &mut bound, "").is_err());
    assert!(matches(&line(r#"{"type":"wait"}"#), &line(r#"{"type":"wait","seen":1}"#), &mut bound, "").is_err());
    assert!(matches(&line(r#"{"seen":1}"#), &line(r#"{"seen":2}"#), &mut bound, "").is_err());
    assert_eq!(substitute(&line(r#"{"id":"$e"}"#), &bound), line(r#"{"id":"e1"}"#));
}
