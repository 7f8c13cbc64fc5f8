//! The suite's readers never panic: every committed case, script and seat
//! file, and a baseline, damaged (a value replaced, a key removed, the text
//! cut short, or bytes instead), is refused or read. `scripts/fuzz.sh` runs
//! these at 100 000 cases each.

use crate::support::{committed_suite, suite_root};
use proptest::prelude::*;
use sharedos_grading::input::baseline::parse_baseline;
use sharedos_grading::input::loader::{parse_case, parse_script, parse_seat, Suite};
use sharedos_testkit::mutate::{damage, damaged};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Keys and values the readers branch on.
#[rustfmt::skip]
const WORDS: &[&str] = &[
    "id", "family", "adversary", "conditions", "world", "expectTurn", "notApplicableIn", "status", "retryable",
    "attempts", "role", "tool", "toolArguments", "expect", "statuses", "reasonCodes", "kind", "terminal", "turn",
    "step", "atMs", "matrix", "drain", "annotate", "messaging", "attack", "control", "probe", "denied", "succeeded",
    "files.read", "files.replace", "now", "grace", "timeLimitMs", "messaging", "name", "command", "args", "clock",
    "virtual", "real", "prompted", "scripted", "per-turn", "per-run", "limits",
];

/// The text of every committed document of `folder`.
fn documents(folder: &str) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(suite_root().join(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.to_string_lossy().ends_with(".schema.json"))
        .collect();
    files.sort();
    files.into_iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

fn cases() -> &'static [String] {
    static CASES: OnceLock<Vec<String>> = OnceLock::new();
    CASES.get_or_init(|| documents("cases"))
}

fn scripts() -> &'static [String] {
    static SCRIPTS: OnceLock<Vec<String>> = OnceLock::new();
    SCRIPTS.get_or_init(|| documents("adversaries"))
}

fn suite() -> &'static Suite {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    SUITE.get_or_init(committed_suite)
}

const SEAT: &str = r#"{"name": "acme", "label": "Acme", "description": "a seat", "kind": "scripted",
  "command": "python3", "args": ["runtime.py"], "passEnv": ["PATH"], "clock": "virtual", "process": "per-run",
  "limits": {"busyTimeoutMs": 100, "maxLineBytes": 4096}}"#;

const BASELINE: &str = "version = 1\n\n[[known-failure]]\ncase = \"forged-grant\"\ncondition = \"baseline\"\ncolumn = \"model-scripted\"\nreason = \"r\"\n";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

proptest! {
    #[test]
    fn the_case_reader_never_panics(which in any::<usize>(), damage in damage(WORDS)) {
        let case = &cases()[which % cases().len()];
        let _ = parse_case(Path::new("cases/fuzzed.json"), &text(&damaged(case, &damage)));
    }

    #[test]
    fn the_script_reader_never_panics(which in any::<usize>(), damage in damage(WORDS)) {
        let script = &scripts()[which % scripts().len()];
        let _ = parse_script(Path::new("adversaries/fuzzed.json"), &text(&damaged(script, &damage)));
    }

    #[test]
    fn the_seat_reader_never_panics(damage in damage(WORDS)) {
        let _ = parse_seat(Path::new("seats/fuzzed.json"), Path::new("seats"), &text(&damaged(SEAT, &damage)));
    }

    #[test]
    fn the_baseline_reader_never_panics(cut in any::<usize>(), noise in ".{0,24}", at in any::<usize>()) {
        // TOML, not JSON: cut short, and with arbitrary text spliced in.
        let cut = &BASELINE[..cut % (BASELINE.len() + 1)];
        let at = at % (BASELINE.len() + 1);
        let spliced = BASELINE.get(..at).map(|head| format!("{head}{noise}{}", &BASELINE[at..]));
        let _ = parse_baseline(Path::new("baseline.toml"), cut, suite());
        if let Some(spliced) = spliced {
            let _ = parse_baseline(Path::new("baseline.toml"), &spliced, suite());
        }
    }
}
