//! Progress on a terminal: drawn on stderr when stderr is a terminal, never
//! under `CI` or `--no-progress`, and never changing stdout, the JSON and
//! JSON Lines output, or the JUnit file.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A pseudo-terminal of 160 columns: its controlling side, and the path of
/// the side a command writes to.
fn terminal() -> (OwnedFd, PathBuf) {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let path = PathBuf::from(ptsname(&master, Vec::new()).unwrap().into_string().unwrap());
    let size = rustix::termios::Winsize { ws_row: 40, ws_col: 160, ws_xpixel: 0, ws_ypixel: 0 };
    rustix::termios::tcsetwinsize(&master, size).unwrap();
    (master, path)
}

/// How a command's stderr is given.
#[derive(Clone, Copy, PartialEq)]
enum Stderr {
    Terminal,
    Pipe,
}

/// Runs the binary with `args`, `CI` unset unless `env` sets it: its output,
/// and what a terminal on its stderr showed.
fn run(args: &[&str], stderr: Stderr, env: &[(&str, &str)]) -> (Output, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sharedos-conformance"));
    command.args(args).current_dir(root()).env_remove("CI").envs(env.iter().copied());
    command.stdout(Stdio::piped());
    if stderr == Stderr::Pipe {
        command.stderr(Stdio::piped());
        return (command.output().unwrap(), String::new());
    }
    let (master, path) = terminal();
    let side = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
    command.stderr(Stdio::from(side));
    let child = command.spawn().unwrap();
    // The command holds its side of the terminal: this process must not, or
    // reading never ends.
    drop(command);
    // The terminal is read while the command runs, so it never fills.
    let reader = std::thread::spawn(move || {
        let mut shown = Vec::new();
        let mut file = std::fs::File::from(master);
        let mut chunk = [0_u8; 8192];
        // Ends with EIO once no process holds the other side.
        while let Ok(n) = file.read(&mut chunk) {
            if n == 0 {
                break;
            }
            shown.extend_from_slice(&chunk[..n]);
        }
        String::from_utf8_lossy(&shown).into_owned()
    });
    let output = child.wait_with_output().unwrap();
    (output, reader.join().unwrap())
}

const COLUMN: &str = "process:python-reference";

/// A column graded in the harness's own process, for the tests that
/// compare outputs run by run: what they hold does not depend on where
/// the runtime runs, and it starts none.
const IN_PROCESS: &str = "adversary-embedded";

#[test]
fn a_terminal_on_stderr_shows_each_columns_cells_the_running_ones_and_the_tally() {
    let (output, shown) = run(&["check", "--column", COLUMN, "--jobs", "2"], Stderr::Terminal, &[]);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    assert!(shown.contains("running 118 cells of 1 column on 2 workers"), "{shown}");
    assert!(shown.contains(&format!("{COLUMN}  ")) && shown.contains("/118 cells"), "each column's cells: {shown}");
    assert!(shown.contains("/118 runs, ") && shown.contains(" so far, about "), "the runs and the time left: {shown}");
    assert!(shown.contains("passed 118  failed 0  flaky 0"), "the tally: {shown}");
    // A cell while it runs: its name, then its elapsed time.
    assert!(shown.contains(&format!("/{COLUMN} 0s")), "a running cell: {shown}");
    // Cleared before the command ended: its last bytes erase a line.
    assert!(shown.trim_end_matches('\n').ends_with("\u{1b}[2K"), "{:?}", &shown[shown.len().saturating_sub(80)..]);
    let (piped, _) = run(&["check", "--column", COLUMN, "--jobs", "2"], Stderr::Pipe, &[]);
    assert_eq!(output.stdout, piped.stdout, "stdout is the same with a terminal on stderr");
}

#[test]
fn certify_and_verify_show_their_cells_on_a_terminal_too() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    let out = bundle.to_str().unwrap();
    let (output, shown) = run(&["certify", "--column", COLUMN, "--shard", "1/8", "--out", out], Stderr::Terminal, &[]);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    assert!(shown.contains("adversary-embedded") && shown.contains(COLUMN) && shown.contains(" cells"), "{shown}");
    let (output, shown) = run(&["verify", out], Stderr::Terminal, &[]);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    assert!(shown.contains(COLUMN) && shown.contains(" cells") && shown.contains(" runs, "), "{shown}");
}

#[test]
fn nothing_is_drawn_under_ci_or_no_progress_or_without_a_terminal_and_no_output_moves() {
    let dir = tempfile::tempdir().unwrap();
    let args = |format: &'static str, junit: &Path| {
        let junit = junit.to_str().unwrap().to_string();
        vec![
            "check".to_string(),
            "--column".into(),
            IN_PROCESS.into(),
            "--format".into(),
            format.into(),
            "--junit".into(),
            junit,
        ]
    };
    fn strs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let mut compared = 0;
    for format in ["human", "json", "jsonl"] {
        let (with, without) = (dir.path().join(format!("{format}-tty.xml")), dir.path().join(format!("{format}.xml")));
        let with_args = args(format, &with);
        let without_args = args(format, &without);
        let (terminal, shown) = run(&strs(&with_args), Stderr::Terminal, &[]);
        let (piped, _) = run(&strs(&without_args), Stderr::Pipe, &[]);
        assert!(shown.contains("/118 cells"), "{format}: {shown}");
        assert_eq!(terminal.stdout, piped.stdout, "{format}: stdout moved");
        assert_eq!(std::fs::read(&with).unwrap(), std::fs::read(&without).unwrap(), "{format}: the JUnit file moved");
        let stderr = String::from_utf8_lossy(&piped.stderr);
        assert!(!stderr.contains(['\u{1b}', '\r']), "{format}: a pipe got a terminal's controls: {stderr:?}");
        compared += 1;
    }
    assert_eq!(compared, 3);
    let quiet = ["check", "--column", IN_PROCESS, "--case", "forged-grant"];
    for (args, env) in [([&quiet[..], &["--no-progress"]].concat(), vec![]), (quiet.to_vec(), vec![("CI", "true")])] {
        let (output, shown) = run(&args, Stderr::Terminal, &env);
        assert_eq!(output.status.code(), Some(0), "{shown}");
        assert_eq!(shown, "running 1 cell of 1 column on 1 worker\r\n", "{args:?} {env:?}: only what runs is said");
    }
}
