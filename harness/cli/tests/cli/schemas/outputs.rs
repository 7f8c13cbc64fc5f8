//! Everything the binary writes follows its schema: bundles (whole, a
//! shard, merged, repeated) and every evidence line, the statement, the
//! JSON Lines events of a run with drift, a baseline and declared cells,
//! and each `--format json` output.

use super::{assert_valid, lines, read_json, root};
use serde_json::{json, Value};
use sharedos_conformance_metadata::witness::{Answer, Exchange, Outside, OwnCall, Returned, WitnessLog};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the binary from the repository root; its exit code and stdout.
fn run(args: &[&str]) -> (i32, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_sharedos-conformance")).args(args).current_dir(root()).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (
        output.status.code().unwrap_or_else(|| panic!("{args:?} was killed: {stderr}")),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// Runs the binary and requires `code`.
fn run_expecting(code: i32, args: &[&str]) -> String {
    let (got, out) = run(args);
    assert_eq!(got, code, "{args:?}:\n{out}");
    out
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A bundle's manifest, statement and every evidence line follow their
/// schemas; the evidence lines, parsed.
fn bundle_follows(bundle: &Path) -> Vec<Value> {
    let what = bundle.file_name().unwrap().to_string_lossy().into_owned();
    assert_valid("manifest.schema.json", &read_json(&bundle.join("manifest.json")), &format!("{what}/manifest.json"));
    assert_valid(
        "statement.schema.json",
        &read_json(&bundle.join("statement.json")),
        &format!("{what}/statement.json"),
    );
    let evidence = lines(&std::fs::read_to_string(bundle.join("evidence.jsonl")).unwrap());
    assert!(!evidence.is_empty(), "{what}: no evidence");
    for (n, line) in evidence.iter().enumerate() {
        assert_valid("evidence-line.schema.json", line, &format!("{what}/evidence.jsonl line {}", n + 1));
    }
    evidence
}

fn verify_json(bundle: &Path) -> Value {
    let (_, out) = run(&["verify", text(bundle), "--format", "json"]);
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_valid("verify-output.schema.json", &value, &format!("verify --format json {}", bundle.display()));
    value
}

/// No committed column seats a live CLI, so a line with witness logs is
/// built from the harness's own types: every answer kind, every part of
/// what happened outside.
#[test]
fn an_evidence_line_with_a_scripted_models_witness_follows_the_schema() {
    let exchange = |answer: Answer| Exchange {
        method: "POST".into(),
        path: "/v1/messages".into(),
        body_sha256: Some("0".repeat(64)),
        body_bytes: 10,
        offered: vec!["files.read".into()],
        returned: vec![Returned { index: 0, is_error: false, text: "ok".into() }],
        answer,
    };
    let call =
        Answer::Call { index: 0, tool: "files.read".into(), name: "mcp__sharedos__files_read".into(), offered: true };
    let answers = [
        call,
        Answer::Final,
        Answer::Failure,
        Answer::HangUp,
        Answer::Stall,
        Answer::CutShort,
        Answer::Side,
        Answer::Unauthorized,
        Answer::NotFound,
        Answer::Unreadable,
        Answer::TooLarge { declared: Some(16 << 20) },
        Answer::TooLarge { declared: None },
    ];
    let mut exchanges: Vec<Exchange> = answers.map(exchange).to_vec();
    // Refused on its headers: nothing of the body read, so no digest.
    exchanges.push(Exchange { body_sha256: None, body_bytes: 0, ..exchange(Answer::Unauthorized) });
    let outside = Outside {
        leaked: vec!["canary".into()],
        fetched: 1,
        own_calls: vec![OwnCall { tool: "cli.shell".into(), status: "completed".into() }],
        changed: vec!["notes.txt".into()],
    };
    let log = WitnessLog { api: "anthropic-messages".into(), exchanges, outside };
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("b");
    run_expecting(
        0,
        &["certify", "--column", "model-scripted", "--shard", "1/8", "--jobs", "2", "--out", text(&bundle)],
    );
    let mut line = bundle_follows(&bundle).remove(0);
    line["grading"]["witness"] = json!([log]);
    assert_valid("evidence-line.schema.json", &line, "an evidence line with witness logs");
}

/// A root whose golden files for `case` are a copy, one of them changed,
/// the rest of the suite the repository's own.
fn root_with_drift(dir: &Path, case: &str) -> PathBuf {
    let copy = dir.join("root");
    std::fs::create_dir_all(copy.join("golden").join(case)).unwrap();
    for linked in ["cases", "adversaries", "harness"] {
        std::os::unix::fs::symlink(root().join(linked), copy.join(linked)).unwrap();
    }
    let mut names: Vec<PathBuf> =
        std::fs::read_dir(root().join("golden").join(case)).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for (n, from) in names.iter().enumerate() {
        let mut bytes = std::fs::read(from).unwrap();
        if n == 0 {
            bytes.extend_from_slice(b"\n");
        }
        std::fs::write(copy.join("golden").join(case).join(from.file_name().unwrap()), bytes).unwrap();
    }
    copy
}

#[test]
fn the_json_lines_and_json_outputs_of_run_check_and_bless_follow_their_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let copy = root_with_drift(dir.path(), "bounded-grant");
    let baseline = dir.path().join("baseline.toml");
    let listed = "[[known-failure]]\ncase = \"bounded-grant\"\ncondition = \"single-use-write-grant\"\ncolumn = \"model-scripted\"\nreason = \"listed, and it passes\"\n";
    std::fs::write(&baseline, format!("version = 1\n\n{listed}")).unwrap();
    let select = ["--root", text(&copy), "--case", "bounded-grant", "--case", "replay-freshness", "--jobs", "2"];
    let with = |command: &'static str, format: &'static str| {
        [&[command][..], &select, &["--baseline", text(&baseline), "--format", format]].concat()
    };

    let events = lines(&run_expecting(1, &with("check", "jsonl")));
    for event in &events {
        assert_valid("run-event.schema.json", event, &format!("check --format jsonl: {event}"));
    }
    let kinds = |key: &str| events.iter().filter_map(|e| e[key].as_str().map(str::to_string)).collect::<Vec<_>>();
    let (golden, event) = (kinds("golden"), kinds("event"));
    for expected in ["same", "differs", "none"] {
        assert!(golden.iter().any(|g| g == expected), "no `{expected}` golden state: {golden:?}");
    }
    assert!(event.iter().any(|e| e == "drift") && event.last().map(String::as_str) == Some("finished"));
    assert!(events.iter().any(|e| e["baseline"]["verdict"] == json!("stale")), "a stale baseline entry");

    let output: Value = serde_json::from_str(&run_expecting(1, &with("check", "json"))).unwrap();
    assert_valid("run-output.schema.json", &output, "check --format json");
    assert!(!output["drift"].as_array().unwrap().is_empty());

    let blessed = lines(&run_expecting(1, &with("bless", "jsonl")));
    blessed.iter().for_each(|e| assert_valid("run-event.schema.json", e, &format!("bless --format jsonl: {e}")));
    assert!(blessed.iter().any(|e| e["golden"] == json!("blessed")));
    let output: Value = serde_json::from_str(&run_expecting(1, &with("bless", "json"))).unwrap();
    assert_valid("run-output.schema.json", &output, "bless --format json");
}

#[test]
fn a_repeated_runs_output_and_a_diff_against_it_follow_their_schemas() {
    let args = ["--column", "process:python-reference", "--case", "bounded-grant", "--repeat", "2", "--jobs", "2"];
    let output: Value =
        serde_json::from_str(&run_expecting(0, &[&["run"][..], &args, &["--format", "json"]].concat())).unwrap();
    assert_valid("run-output.schema.json", &output, "run --repeat 2 --format json");
    let manifest = &output["manifest"];
    assert!(manifest["rows"][0]["cells"][0]["repeats"].is_object(), "{manifest}");
    let events = lines(&run_expecting(0, &[&["run"][..], &args, &["--format", "jsonl"]].concat()));
    events
        .iter()
        .for_each(|e| assert_valid("run-event.schema.json", e, &format!("run --repeat 2 --format jsonl: {e}")));

    // The same cell failing every run: a regression between repeated cells.
    let mut failing = manifest.clone();
    let cell = &mut failing["rows"][0]["cells"][0];
    cell["status"] = json!("fail");
    cell["repeats"] = json!({"runs": 2, "passes": 0, "statuses": ["fail", "fail"], "interval": [0.0, 0.6576], "passAll": false, "passAny": false});
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, value: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(value).unwrap()).unwrap();
        path
    };
    let (repeated, failing) = (write("repeated.json", manifest), write("failing.json", &failing));
    let committed = root().join("reports/conformance.json");
    let diff = |before: &Path, after: &Path| {
        let (_, out) = run(&["diff", text(before), text(after), "--format", "json"]);
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_valid("diff-output.schema.json", &value, &format!("diff {} {}", before.display(), after.display()));
        value["cells"].as_array().unwrap().clone()
    };
    let removed = diff(&committed, &repeated);
    assert!(removed.iter().any(|c| c["after"].is_null()), "a cell only the committed run has");
    diff(&repeated, &committed);
    let regressed = diff(&repeated, &failing);
    assert!(regressed.iter().any(|c| c["pValue"].is_number() && c["after"]["runs"].is_object()), "{regressed:?}");
}

#[test]
fn every_line_of_list_follows_the_list_schema_in_both_formats() {
    for format in ["json", "jsonl"] {
        let listed = lines(&run_expecting(0, &["list", "--format", format]));
        assert!(listed.len() > 1000, "{format}: {} lines", listed.len());
        assert!(listed.iter().any(|l| l["declared"] == json!(true)));
        for line in &listed {
            assert_valid("list-line.schema.json", line, &format!("list --format {format}: {line}"));
        }
    }
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn a_bundle_its_shards_and_their_merge_follow_their_schemas_and_so_does_verify() {
        let dir = tempfile::tempdir().unwrap();
        let whole = dir.path().join("whole");
        run_expecting(0, &["certify", "--column", "process:python-reference", "--jobs", "2", "--out", text(&whole)]);
        let evidence = bundle_follows(&whole);
        assert!(evidence.iter().any(|l| l["grading"]["messaging"].is_object()), "a messaging world's line");
        assert_eq!(verify_json(&whole)["verified"], json!(true));

        // Parts of a repeated run, their lines numbered by run, and their merge.
        let parts: Vec<PathBuf> = (1..=2).map(|i| dir.path().join(format!("part{i}"))).collect();
        for (i, part) in parts.iter().enumerate() {
            let shard = format!("{}/2", i + 1);
            let args = ["certify", "--column", "process:python-reference", "--shard", &shard, "--repeat", "2"];
            run_expecting(0, &[&args[..], &["--jobs", "2", "--out", text(part)]].concat());
            let evidence = bundle_follows(part);
            assert!(evidence.iter().any(|l| l["repeat"] == json!(2)), "a second run's line");
        }
        let manifest = read_json(&parts[0].join("manifest.json"));
        assert!(manifest["rows"].as_array().unwrap().iter().any(|r| r["cells"][1]["repeats"].is_object()));
        assert_eq!(verify_json(&parts[0])["shard"], json!("1/2"));
        let merged = dir.path().join("merged");
        run_expecting(0, &["merge", text(&parts[0]), text(&parts[1]), "--out", text(&merged)]);
        bundle_follows(&merged);

        // A damaged bundle: verify's failures follow the schema too.
        let file = whole.join("evidence.jsonl");
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() / 2;
        bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
        std::fs::write(&file, bytes).unwrap();
        let failed = verify_json(&whole);
        assert_eq!(failed["verified"], json!(false));
        assert!(!failed["failures"].as_array().unwrap().is_empty());
    }
}
