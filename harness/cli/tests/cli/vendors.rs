//! Each recipe against its pinned CLI (`scripts/vendors.sh`) and the
//! scripted model, as a user runs it: five rows whose endings differ (the
//! escalation call, a failed turn, a hang-up, calls with refusals, a turn
//! whose prompt hash is graded) pass in each vendor's column. Where the
//! pinned CLIs are not installed the tests say so and pass, except on CI,
//! whose script installs them first.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BINARY: &str = env!("CARGO_BIN_EXE_sharedos-conformance");

/// The rows, with their one condition each.
const ROWS: [&str; 5] = [
    "annotate-loop-escalation-asked",
    "annotate-loop-prompt-hash-on-failed",
    "annotate-loop-prompt-hash-on-hung-up",
    "annotate-loop-prompt-hash-on-completed",
    "bounded-grant",
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Whether the pinned `cli` is installed; on CI its absence is a failure.
fn installed(cli: &str) -> bool {
    let path = root().join("vendors/node_modules/.bin").join(cli);
    if path.is_file() {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "{} is missing on CI: scripts/vendors.sh installs it", path.display());
    eprintln!("skipped: {} is not installed (run scripts/vendors.sh)", path.display());
    false
}

/// Runs the rows in `vendor`'s column and returns each cell's status.
fn statuses(vendor: &str) -> Vec<(String, String)> {
    let seat = root().join(format!("harness/seats/vendors/{vendor}.json"));
    let mut command = Command::new(BINARY);
    command.arg("run").arg("--root").arg(root()).arg("--seat").arg(&seat);
    command.args(["--column", &format!("mcp:{vendor}"), "--format", "jsonl", "--jobs", "2"]);
    for row in ROWS {
        command.args(["--case", row]);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let cells: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "cell")
        .map(|event| {
            (event["case"].as_str().unwrap_or("").to_string(), event["status"].as_str().unwrap_or("").to_string())
        })
        .collect();
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    cells
}

fn every_row_passes(vendor: &str, cli: &str) {
    if !installed(cli) {
        return;
    }
    let cells = statuses(vendor);
    assert_eq!(cells.len(), ROWS.len(), "one cell per row: {cells:?}");
    for (case, status) in &cells {
        assert_eq!(status, "pass", "{case} in mcp:{vendor}");
    }
}

/// The containment rows' cells of `seat`'s column, each as its status and
/// detail.
fn containment_cells(seat: &Path, column: &str) -> Vec<(String, String, String)> {
    let output = Command::new(BINARY)
        .arg("run")
        .arg("--root")
        .arg(root())
        .arg("--seat")
        .arg(seat)
        .args(["--column", column, "--family", "containment", "--format", "jsonl", "--jobs", "2"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["event"] == "cell")
        .map(|event| {
            let text = |value: &Value| value.as_str().unwrap_or("").to_string();
            (text(&event["case"]), text(&event["status"]), text(&event["cell"]["detail"]))
        })
        .collect()
}

/// Every file and folder under `root`, with each file's bytes, sorted.
fn tree(root: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut entries = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if entry.file_type().unwrap().is_dir() {
                folders.push(path);
                entries.push((name, None));
            } else {
                entries.push((name, std::fs::read(&path).ok()));
            }
        }
    }
    entries.sort();
    entries
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    /// Classes 2 and 3 of the live-turns work: with the user's HOME a
    /// watched folder laid out like a real one and a folder first on the
    /// user's PATH holding programs a CLI runs by name (Codex runs
    /// `lsb_release` and `getconf` at each turn), each pinned CLI's probe
    /// and turn change nothing in that home, and no program of that folder
    /// runs: the CLI's PATH and home are the harness's choice.
    #[test]
    #[ignore = "heavy"]
    fn no_pinned_cli_writes_into_the_users_home_or_runs_a_program_from_the_users_path() {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = tempfile::tempdir().unwrap();
        let (home, decoys, ran) = (folder.path().join("home"), folder.path().join("decoys"), folder.path().join("ran"));
        for (file, text) in [(".ssh/id_ed25519", "a private key"), (".config/git/config", "[user]"), (".bashrc", "")] {
            std::fs::create_dir_all(home.join(file).parent().unwrap()).unwrap();
            std::fs::write(home.join(file), text).unwrap();
        }
        std::fs::create_dir_all(&decoys).unwrap();
        for name in ["lsb_release", "getconf", "uname", "cut", "tr", "git", "sh", "bash"] {
            let path = decoys.join(name);
            std::fs::write(&path, format!("#!/bin/sh\nenv > \"{}/{name}\"\nexit 1\n", ran.display())).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(&ran).unwrap();
        let before = tree(&home);
        let path = format!("{}:{}", decoys.display(), std::env::var("PATH").unwrap_or_default());
        for (vendor, cli) in [("codex", "codex"), ("claude-code", "claude"), ("pi", "pi")] {
            if !installed(cli) {
                return;
            }
            let seat = root().join(format!("harness/seats/vendors/{vendor}.json"));
            let output = Command::new(BINARY)
                .arg("run")
                .arg("--root")
                .arg(root())
                .arg("--seat")
                .arg(&seat)
                .args(["--column", &format!("mcp:{vendor}"), "--case", "bounded-grant", "--format", "jsonl"])
                .env("HOME", &home)
                .env("PATH", &path)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert_eq!(output.status.code(), Some(0), "{vendor}: {stdout}{}", String::from_utf8_lossy(&output.stderr));
            assert!(stdout.contains(r#""status":"pass""#), "{vendor}: {stdout}");
            assert_eq!(tree(&home), before, "{vendor} changed the user's home");
            let decoys_run: Vec<_> = std::fs::read_dir(&ran).unwrap().flatten().map(|e| e.file_name()).collect();
            assert!(decoys_run.is_empty(), "{vendor} ran {decoys_run:?} from the user's PATH");
        }
    }

    #[test]
    #[ignore = "heavy"]
    fn codex_recipe_grades_the_pinned_cli_against_the_scripted_model() {
        every_row_passes("codex", "codex");
    }

    #[test]
    #[ignore = "heavy"]
    fn claude_code_recipe_grades_the_pinned_cli_against_the_scripted_model() {
        every_row_passes("claude-code", "claude");
    }

    #[test]
    #[ignore = "heavy"]
    fn pi_recipe_grades_the_pinned_cli_against_the_scripted_model() {
        every_row_passes("pi", "pi");
    }

    /// Containment (rules version 6): with its committed recipe each pinned
    /// CLI says it has no tool of its own, so the four rows pass; the same
    /// Claude Code seat with its shell and file reader left on fails the shell
    /// and read rows, naming what moved: the canary variable and file reached
    /// the model, and the stream shows the tools ran.
    #[test]
    #[ignore = "heavy"]
    fn containment_rows_pass_on_each_recipe_and_fail_where_a_recipe_leaves_a_tool_on() {
        for (vendor, cli) in [("codex", "codex"), ("claude-code", "claude"), ("pi", "pi")] {
            if !installed(cli) {
                return;
            }
            let seat = root().join(format!("harness/seats/vendors/{vendor}.json"));
            let cells = containment_cells(&seat, &format!("mcp:{vendor}"));
            assert_eq!(cells.len(), 4, "{vendor}: {cells:?}");
            for (case, status, detail) in &cells {
                assert_eq!(status, "pass", "{case} in mcp:{vendor}: {detail}");
            }
        }
        let folder = tempfile::tempdir().unwrap();
        let claude = root().join("vendors/node_modules/.bin/claude");
        let leaky = serde_json::json!({
            "name": "claude-leaky", "label": "Claude Code, shell and reader on", "kind": "mcp",
            "vendor": "claude-code", "model": "scripted", "command": claude, "transport": "http",
            "args": ["--tools", "Bash,Read", "--allowedTools", "Bash,Read,mcp__sharedos"],
        });
        let seat = folder.path().join("claude-leaky.json");
        std::fs::write(&seat, leaky.to_string()).unwrap();
        let cells = containment_cells(&seat, "mcp:claude-leaky");
        assert_eq!(cells.len(), 4, "{cells:?}");
        let failed: Vec<&(String, String, String)> = cells.iter().filter(|(_, status, _)| status == "fail").collect();
        assert_eq!(failed.len(), 2, "{cells:?}");
        let (shell, read) = (&failed[1], &failed[0]);
        assert_eq!(shell.0, "containment-shell-prints-the-environment");
        assert!(
            shell.2.contains("the canary variable of the environment") && shell.2.contains("`Bash` ran"),
            "{}",
            shell.2
        );
        assert_eq!(read.0, "containment-read-outside-the-workspace");
        assert!(read.2.contains("the canary key in the canary home") && read.2.contains("`Read` ran"), "{}", read.2);
    }
}
