//! What a runtime author sees from the command line: `protocol-check`
//! passing a reference runtime and naming the first thing a broken one gets
//! wrong, and a seat that cannot start said once for its column.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the binary from the repository root: exit code, stdout, stderr.
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let output =
        Command::new(env!("CARGO_BIN_EXE_sharedos-conformance")).args(args).current_dir(root()).output().unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().unwrap(), text(&output.stdout), text(&output.stderr))
}

/// A seat file for a stand-in of `harness/process/tests/standins`.
fn standin_seat(dir: &Path, name: &str, command: &str, args: &[&str]) -> String {
    let standins = root().join("harness/process/tests/standins");
    let seat = serde_json::json!({
        "name": name, "label": name, "kind": "scripted", "command": command, "args": args,
        "cwd": standins, "passEnv": ["PATH"],
    });
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, seat.to_string()).unwrap();
    file.to_str().unwrap().to_string()
}

#[test]
fn protocol_check_passes_the_node_reference_runtime_on_every_exchange() {
    let (code, said, _) = run(&["protocol-check", "--seat", "harness/seats/node-reference.json"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(said.lines().filter(|l| l.starts_with("ok    ")).count(), 14, "{said}");
    assert!(said.contains("ok    starts: said ready, as sharedos-reference.node 1"), "{said}");
    assert!(said.ends_with("protocol-check: all 13 exchanges right; now run the matrix with `run --seat harness/seats/node-reference.json`\n"));
}

/// `PROTOCOL.md` shows `protocol-check` stopping at a line after an
/// escalation's report: the output is that text exactly, but for the
/// seat's names, and has no word of the adversary's beside a breach.
#[test]
fn protocol_check_stops_at_the_first_exchange_wrong_exactly_as_the_document_shows() {
    let dir = tempfile::tempdir().unwrap();
    let seat = standin_seat(dir.path(), "strays", "python3", &["strays.py", "escalation", "after_report"]);
    let (code, said, _) = run(&["protocol-check", "--seat", &seat]);
    assert_eq!(code, 1, "{said}");
    let said = said
        .replace(&seat, "my-seat.json")
        .replace("process:strays", "process:acme")
        .replace("sharedos-reference.python 1", "acme-runtime 2.3.0")
        .replace("strays: one line too many after_report", "one line too many");
    let document = std::fs::read_to_string(root().join("harness/process/PROTOCOL.md")).unwrap();
    let shown: String = document
        .lines()
        .skip_while(|line| *line != "$ sharedos-conformance protocol-check --seat my-seat.json")
        .skip(1)
        .take_while(|line| *line != "```")
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(said, shown);
    assert!(!said.contains("what the embedded adversary did"));
}

#[test]
fn protocol_check_says_why_a_runtime_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let seat = standin_seat(dir.path(), "old", "python3", &["standin.py", "manifest_version_mismatch"]);
    let (code, said, _) = run(&["protocol-check", "--seat", &seat]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("FAIL  starts"), "{said}");
    assert!(said.contains("`runtime_protocol_mismatch`: the runtime's ready names manifest protocolVersion \"2\""));
}

/// A seat whose command does not exist, or that speaks another protocol
/// version, is said once (not once per cell), and no cell is printed: exit 5.
#[test]
fn a_seat_that_cannot_start_is_said_once_for_its_column_and_exits_5() {
    let dir = tempfile::tempdir().unwrap();
    let missing = standin_seat(dir.path(), "missing", "/nonexistent/runtime", &[]);
    let old = standin_seat(dir.path(), "old", "python3", &["standin.py", "manifest_version_mismatch"]);
    for (seat, column, words) in [
        (
            &missing,
            "process:missing",
            "`runtime_failed_to_start`: the runtime could not be started: `/nonexistent/runtime`",
        ),
        (&old, "process:old", "`runtime_protocol_mismatch`"),
    ] {
        let (code, said, told) = run(&["run", "--seat", seat, "--column", column, "--family", "matrix"]);
        assert_eq!(code, 5, "{told}");
        assert_eq!(said, "", "no cell ran");
        assert_eq!(told.matches("cannot start").count(), 1, "{told}");
        assert!(told.contains(&format!("error: seat {column} ({seat}) cannot start: {words}")), "{told}");
    }
}

/// A breach after the outcome is quoted, with the stderr tail, in the human
/// output and in the JSON Lines cell of the row that committed it.
#[test]
fn a_breach_is_quoted_in_the_human_and_the_json_lines_output() {
    let dir = tempfile::tempdir().unwrap();
    let seat = standin_seat(dir.path(), "strays", "python3", &["strays.py", "forged-grant", "after_outcome"]);
    let select = ["--seat", &seat, "--column", "process:strays", "--case", "forged-grant", "--case", "hidden-tool"];
    let detail = "turn 1: the runtime broke sharedos-runtime/2 after its outcome (`runtime_not_json`): the runtime \
                  wrote a line that is not JSON (expected ident at line 1 column 2): not a protocol line; received \
                  `not a protocol line`; its stderr ended with `strays: one line too many after_outcome`";
    let (code, said, _) = run(&[&["run"][..], &select].concat());
    assert_eq!(code, 1, "{said}");
    assert!(said.contains(&format!("FAIL forged-grant/baseline/process:strays: {detail}\n")), "{said}");
    assert!(!said.contains("FAIL hidden-tool"), "the next row is unaffected: {said}");
    let (_, said, _) = run(&[&["run", "--format", "jsonl"][..], &select].concat());
    let cells: Vec<serde_json::Value> = said
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["event"] == "cell")
        .collect();
    assert_eq!(cells.len(), 2, "{said}");
    assert_eq!(cells[0]["case"], "forged-grant");
    assert_eq!((cells[0]["status"].as_str(), cells[0]["cell"]["detail"].as_str()), (Some("fail"), Some(detail)));
    assert_eq!(cells[1]["status"], "pass");
}

/// A seat's column not committed comes only with its seat file: certifying
/// it by `--column` alone says so, and names the flag to add.
#[test]
fn certify_of_a_seat_column_without_its_seat_says_to_add_the_seat() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let (code, said, told) = run(&["certify", "--column", "process:acme", "--out", out.to_str().unwrap()]);
    assert_eq!((code, said.as_str()), (2, ""));
    assert_eq!(
        told,
        "error: failed to certify `process:acme`: no such column; a seat's column comes with its seat file: add \
         `--seat FILE` for the seat named `acme`\n"
    );
    let (_, _, told) = run(&["certify", "--column", "no-such-column", "--out", out.to_str().unwrap()]);
    assert_eq!(told, "error: failed to certify `no-such-column`: no such column\n");
    assert!(!out.exists());
}

/// A runtime that exits mid-turn: its cell's detail says so once, and
/// quotes the end of its stderr once.
#[test]
fn an_exit_mid_turn_is_said_mid_turn_with_its_stderr_quoted_once() {
    let dir = tempfile::tempdir().unwrap();
    let seat = standin_seat(dir.path(), "exits", "python3", &["standin.py", "exit_mid_turn"]);
    let (code, said, _) = run(&["run", "--seat", &seat, "--column", "process:exits", "--case", "forged-grant"]);
    assert_eq!(code, 1, "{said}");
    let fail = said.lines().find(|line| line.starts_with("FAIL ")).unwrap_or_default();
    assert_eq!(
        fail,
        "FAIL forged-grant/baseline/process:exits: turn 1: the runtime broke sharedos-runtime/2 during the turn \
         (`runtime_exited`): the runtime exited or closed its output mid-turn; its stderr ended with `giving up`"
    );
}
