//! A runtime that misbehaves after its ending on one row only (the Perl
//! test runtime `harness/process/tests/standins/misbehaving.pl`, one
//! process per worker serving every selected row): each misbehaviour is a
//! breach of that row and of no other, in the same words on every run and
//! under any `--jobs`, and `protocol-check` names that row's exchange and
//! the section of `PROTOCOL.md` that says how, on every run.
//!
//! Twenty runs of each, the jobs cycling 1, 2, 4. The rows selected follow
//! the misbehaving one in the matrix's order, so a line too many that the
//! harness read late would land in another row's turn on the same process.

use crate::protocol::run;
use std::path::Path;

/// Runs of each misbehaviour.
const RUNS: usize = 20;
/// The jobs the runs cycle through.
const JOBS: [&str; 3] = ["1", "2", "4"];
/// The row that misbehaves, and the turns' ids it starts.
const ROW: (&str, &str) = ("forged-grant", "baseline");
/// The rows run, the misbehaving one among them.
const CASES: [&str; 8] = [
    "expired-grant",
    "escalation",
    "fail-closed-trace-mismatch",
    "forged-grant",
    "grant-material",
    "hidden-tool",
    "host-policy-denied",
    "invalid-tool-result",
];

/// A misbehaviour of the test runtime, and the words its breach starts with.
struct Misbehaviour {
    name: &'static str,
    breach: &'static str,
}

/// Every misbehaviour after the ending: a line that is not JSON in the
/// report's write, in a write of its own, 300 ms later; the report twice;
/// a report before `closed`.
const LATE: [Misbehaviour; 5] = [
    Misbehaviour { name: "stray_same_write", breach: NOT_JSON },
    Misbehaviour { name: "stray_separate_write", breach: NOT_JSON },
    Misbehaviour { name: "stray_later", breach: NOT_JSON },
    Misbehaviour {
        name: "report_twice",
        breach: "turn 1: the runtime broke sharedos-runtime/2 after its report (`runtime_out_of_order`): the runtime \
                 wrote report after its report (after the report, only fenced may come); received `{\"receipts\":",
    },
    Misbehaviour {
        name: "report_before_closed",
        breach: "turn 1: the runtime broke sharedos-runtime/2 after its outcome (`runtime_out_of_order`): the runtime \
                 wrote its report before it read closed: a report comes after closed, and its seen counts closed; \
                 received `{\"receipts\":",
    },
];

const NOT_JSON: &str = "turn 1: the runtime broke sharedos-runtime/2 after its report (`runtime_not_json`): the \
                        runtime wrote a line that is not JSON (expected ident at line 1 column 2): not a protocol \
                        line; received `not a protocol line`; its stderr ended with `misbehaving: ";

/// A seat file for the test runtime misbehaving as `name` on [`ROW`].
fn seat(dir: &Path, name: &str) -> String {
    let standins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../process/tests/standins");
    let turns = format!("{}.{}.", ROW.0, ROW.1);
    let seat = serde_json::json!({
        "name": "misbehaving", "label": "Misbehaving", "kind": "scripted", "command": "perl",
        "args": ["misbehaving.pl", name, turns], "cwd": standins, "passEnv": ["PATH"],
    });
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, seat.to_string()).unwrap();
    file.to_str().unwrap().to_string()
}

/// Runs `check` on each misbehaviour in a thread of its own (the runs are
/// mostly waiting on processes), each thread's runs one after another.
fn each_misbehaviour(names: &[&'static str], check: fn(&str, &str)) {
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for name in names {
            let seat = seat(dir.path(), name);
            scope.spawn(move || check(name, &seat));
        }
    });
}

/// A runtime that waits for an answer under an id it never sent is told
/// so: where it stopped, and the section on ids, not only the receipts it
/// left missing.
#[test]
fn protocol_check_tells_a_runtime_waiting_under_an_id_it_never_sent_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let seat = seat(dir.path(), "wrong_id");
    let (_, said, _) = run(&["protocol-check", "--seat", &seat]);
    let stopped = "      where it stopped: the harness answered call \
                   `forged-grant.baseline.process:misbehaving.kernel.forged-grant.embed-in-tool-arguments` \
                   (`files.open`, succeeded), and the runtime then asked nothing and sent no ending until the turn \
                   was stopped, as a runtime does that waits for the answer under another id than the one its \
                   `invokeTool` gave (each answer carries its request's `id`)\n";
    assert!(said.contains(stopped), "{said}");
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn each_misbehaviour_after_the_ending_is_blamed_on_its_own_row_in_20_runs_byte_identical_across_jobs() {
        each_misbehaviour(&LATE.map(|m| m.name), |name, seat| {
            let expected = LATE.iter().find(|m| m.name == name).unwrap().breach;
            let mut first: Option<String> = None;
            for run_number in 0..RUNS {
                let jobs = JOBS[run_number % JOBS.len()];
                let mut args = vec!["run", "--seat", seat, "--column", "process:misbehaving", "--format", "jsonl"];
                args.extend(["--jobs", jobs]);
                args.extend(CASES.iter().flat_map(|case| ["--case", case]));
                let (code, said, told) = run(&args);
                assert_eq!(code, 1, "{name}, run {run_number}: {told}");
                let cells: Vec<serde_json::Value> = said
                    .lines()
                    .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
                    .filter(|event| event["event"] == "cell")
                    .collect();
                assert_eq!(cells.len(), CASES.len(), "{name}, run {run_number}: every row ran");
                for cell in &cells {
                    let row = (cell["case"].as_str().unwrap(), cell["condition"].as_str().unwrap());
                    let detail = cell["cell"]["detail"].as_str().unwrap_or_default();
                    if row == ROW {
                        assert_eq!(cell["status"], "fail", "{name}, run {run_number}");
                        assert!(detail.starts_with(expected), "{name}, run {run_number}: {detail}");
                    } else {
                        assert_eq!(cell["status"], "pass", "{name}, run {run_number}, {row:?} blamed: {detail}");
                    }
                }
                match &first {
                    None => first = Some(said),
                    Some(first) => {
                        assert_eq!(&said, first, "{name}: run {run_number} (--jobs {jobs}) differs from run 0")
                    }
                }
            }
        });
    }

    #[test]
    #[ignore = "heavy"]
    fn protocol_check_names_the_exchange_and_the_section_of_each_misbehaviour_in_20_of_20_runs() {
        let names: Vec<&'static str> = LATE.iter().map(|m| m.name).chain(["wrong_id"]).collect();
        each_misbehaviour(&names, |name, seat| {
            let section = if name == "wrong_id" { "Framing" } else { "After the outcome: closed, report and fence" };
            let mut first: Option<String> = None;
            for run_number in 0..RUNS {
                let (code, said, _) = run(&["protocol-check", "--seat", seat]);
                assert_eq!(code, 1, "{name}, run {run_number}: {said}");
                let named = "FAIL  calls, their answers, the report and its fence (forged-grant/baseline)";
                assert!(said.contains(named), "{name}, run {run_number}: {said}");
                let see = format!("      see harness/process/PROTOCOL.md, section \"{section}\"\n");
                assert!(said.contains(&see), "{name}, run {run_number}: {said}");
                assert!(said.ends_with("protocol-check: 0 of 13 exchanges right; stopped at the first one wrong\n"));
                match &first {
                    None => first = Some(said),
                    Some(first) => assert_eq!(&said, first, "{name}: run {run_number} differs from run 0"),
                }
            }
        });
    }
}
