//! A live CLI behind MCP, played by small shell scripts: how its stdin is
//! handled (D50), how it fails to start (D49), and what it is given to see.
//! The scripts ignore their recipe's arguments; these turns run on a real
//! clock, as a live seat's do.

use crate::support::{run, sequential_ids};
use sharedos_drivers::child_process::ProcessLimits;
use sharedos_drivers::vendor::Vendor;
use sharedos_mcp::harness::Transport;
use sharedos_mcp::live::{LiveCli, LiveHarness};
use sharedos_mcp::runtime::McpHarnessRuntime;
use sharedos_mcp::serve::ServeOptions;
use sharedos_model::execution::{ExecutionOptions, ExecutionResult, ExecutionStatus};
use sharedos_testkit::world::World;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

/// Claude Code's `result` frame of a completed turn.
const RESULT: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#;

/// A script at `dir/cli` with `body`, made executable.
fn script(dir: &Path, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("cli");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn cli(vendor: Vendor, command: String, env: BTreeMap<String, String>, idle_ms: u64) -> LiveCli {
    let mut env = env;
    env.insert("PATH".into(), "/usr/bin:/bin".into());
    LiveCli {
        vendor,
        transport: Transport::Http,
        command: Some(command),
        args: Vec::new(),
        env,
        limits: ProcessLimits { kill_grace: Duration::from_millis(200), ..ProcessLimits::default() },
        idle_timeout: Duration::from_millis(idle_ms),
    }
}

/// One turn of `cli` under a deadline of `timeout_ms`.
async fn turn(cli: LiveCli, timeout_ms: u64) -> ExecutionResult {
    let world = World::baseline();
    let vendor = cli.vendor;
    let options = ServeOptions { token: true, ..ServeOptions::default() };
    let runtime = McpHarnessRuntime::new(vendor, Rc::new(LiveHarness::new(cli)), sequential_ids());
    let mut request = world.request(None);
    request.options = Some(ExecutionOptions { max_steps: None, max_tool_calls: None, timeout_ms: Some(timeout_ms) });
    run(&world, Rc::new(runtime.with_serve_options(options)), request).await
}

#[tokio::test]
async fn d50_without_keeping_stdin_open_it_is_closed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // Blocks until its input ends, then completes: only a closed stdin lets
    // it finish before the deadline.
    let command = script(dir.path(), &format!("cat > /dev/null\necho '{RESULT}'"));
    let result = turn(cli(Vendor::ClaudeCode, command, BTreeMap::new(), 60_000), 10_000).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded, "{:?}", result.error);
}

#[tokio::test]
async fn d50_a_session_cli_has_stdin_closed_at_its_first_ending_and_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    // Pi's shape: one prompt line, an ending, then the session lasts until
    // its input ends.
    let agent_end = r#"{"type":"agent_end","messages":[]}"#;
    let command = script(dir.path(), &format!("read prompt\necho '{agent_end}'\ncat > /dev/null"));
    let result = turn(cli(Vendor::Pi, command, BTreeMap::new(), 60_000), 10_000).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded, "{:?}", result.error);
}

#[tokio::test]
async fn d50_pi_with_its_retries_on_keeps_its_stdin_past_an_ending_it_retries_and_the_retry_decides() {
    let dir = tempfile::tempdir().unwrap();
    // Pi's shape after a dropped stream: an ending whose last message failed
    // `terminated`, then `auto_retry_start`, then the retry's own ending.
    // Like Pi, it exits at once, writing nothing more, if its input ends
    // while it waits to retry.
    let failed =
        r#"{"type":"agent_end","messages":[{"role":"assistant","stopReason":"error","errorMessage":"terminated"}]}"#;
    let retry = r#"{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":500,"errorMessage":"terminated"}"#;
    let said = r#"{"type":"message_end","message":{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"done"}]}}"#;
    let done = r#"{"type":"agent_end","messages":[{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"done"}]}]}"#;
    let body = format!(
        "read prompt\necho '{failed}'\necho '{retry}'\ntimeout 1 cat > /dev/null\n[ $? -eq 124 ] || exit 0\necho '{said}'\necho '{done}'\ncat > /dev/null"
    );
    let command = script(dir.path(), &body);
    let result = turn(cli(Vendor::Pi, command, BTreeMap::new(), 60_000), 10_000).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded, "the retry's ending decides: {:?}", result.error);
    // Ended mid-retry, Pi would have written no second ending, and the
    // turn would have completed with no answer.
    assert_eq!(result.output, Some(serde_json::json!({ "text": "done" })));
}

#[tokio::test]
async fn the_token_file_goes_with_the_turn_even_while_a_process_the_cli_left_behind_writes_into_its_home() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("workspace.txt");
    // A CLI that leaves a process behind in a session of its own (out of
    // reach of its group's kill), which keeps writing into its home for a
    // while, then completes.
    let body = format!(
        "echo \"$PWD\" > \"$ENV_OUT\"\nsetsid sh -c 'i=0; while [ $i -lt 400 ]; do touch \"$HOME/busy-$i\"; i=$((i+1)); sleep 0.005; done' </dev/null >/dev/null 2>&1 &\necho '{RESULT}'"
    );
    let command = script(dir.path(), &body);
    let env = BTreeMap::from([("ENV_OUT".to_string(), out.display().to_string())]);
    let result = turn(cli(Vendor::ClaudeCode, command, env, 60_000), 10_000).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded, "{:?}", result.error);
    let work = std::fs::read_to_string(&out).unwrap();
    let workspace = Path::new(work.trim()).parent().unwrap().to_path_buf();
    assert!(!workspace.join(".mcp.json").exists(), "the recipe's config, with its token, is gone");
    // The straggler ends by itself; what it wrote goes with it.
    std::thread::sleep(Duration::from_secs(3));
    let _ = std::fs::remove_dir_all(&workspace);
}

#[tokio::test]
async fn the_turns_folders_and_token_file_are_its_users_alone_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("modes.txt");
    // While the turn runs: the modes of the workspace, the token file and
    // the CLI's folders, and whether another user (`nobody`) can read the
    // token file, when this test runs as root and so can try.
    let body = format!(
        "ws=$(dirname \"$PWD\")\n{{ stat -c '%a %n' \"$ws\" \"$ws/.mcp.json\" \"$HOME\" \"$TMPDIR\" \"$PWD\"\n\
         if [ \"$(id -u)\" != 0 ]; then echo 'nobody: not tried'\n\
         elif setpriv --reuid=65534 --regid=65534 --clear-groups cat \"$ws/.mcp.json\" >/dev/null 2>&1; then echo 'nobody: read it'\n\
         else echo 'nobody: refused'; fi; }} > \"$ENV_OUT\"\necho '{RESULT}'"
    );
    let command = script(dir.path(), &body);
    let env = BTreeMap::from([("ENV_OUT".to_string(), out.display().to_string())]);
    let result = turn(cli(Vendor::ClaudeCode, command, env, 60_000), 10_000).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded, "{:?}", result.error);
    let seen = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines.len(), 6, "{seen}");
    let modes: Vec<&str> = lines[..5].iter().map(|line| line.split_once(' ').unwrap().0).collect();
    assert_eq!(modes, ["700", "600", "700", "700", "700"], "{seen}");
    let root = std::process::Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    assert_eq!(lines[5], if root { "nobody: refused" } else { "nobody: not tried" });
}

#[tokio::test]
async fn d50_a_silent_session_cli_has_stdin_closed_after_the_idle_timeout_and_stderr_counts_as_activity() {
    let dir = tempfile::tempdir().unwrap();
    // Says nothing on stdout; talks on stderr for 600 ms, then waits for
    // the end of its input and exits 0 without an ending. With the stderr
    // output counted, the idle timer (250 ms) closes stdin no earlier than
    // 850 ms; were it not, stdin would be closed at 250 ms and the script
    // would exit as soon as its talking was done, at about 600 ms.
    let body = "read prompt\nfor i in 1 2 3 4 5 6; do echo working >&2; sleep 0.1; done\ncat > /dev/null";
    let command = script(dir.path(), body);
    // The world's clock stands still, so the wall clock tells how long the
    // session lasted: a lower bound only, which no slow machine can break.
    let started = std::time::Instant::now();
    let result = turn(cli(Vendor::Pi, command, BTreeMap::new(), 250), 10_000).await;
    let lasted = started.elapsed();
    assert_eq!(result.status, ExecutionStatus::Succeeded, "a clean exit without an ending completes");
    assert!(lasted >= Duration::from_millis(850), "stderr output kept the session open: it lasted {lasted:?}");
}

#[tokio::test]
async fn d49_a_cli_that_cannot_be_started_fails_the_turn_harness_not_started() {
    let missing = "/nonexistent/sharedos/cli".to_string();
    let result = turn(cli(Vendor::Codex, missing, BTreeMap::new(), 60_000), 10_000).await;
    assert_eq!(result.status, ExecutionStatus::Failed);
    assert_eq!(result.error.as_ref().map(|e| e.code.as_str()), Some("harness_not_started"));
}

#[tokio::test]
async fn a_live_cli_sees_only_its_seats_variables_and_its_recipes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("env.txt");
    std::env::set_var("SHAREDOS_TEST_AMBIENT_SECRET", "must-not-leak");
    let command = script(dir.path(), &format!("env > \"$ENV_OUT\"\necho '{RESULT}'"));
    let env = BTreeMap::from([("ENV_OUT".to_string(), out.display().to_string())]);
    let result = turn(cli(Vendor::Codex, command, env, 60_000), 10_000).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded, "{:?}", result.error);
    let seen = std::fs::read_to_string(&out).unwrap();
    let mut names: Vec<&str> = seen.lines().filter_map(|line| line.split_once('=').map(|(name, _)| name)).collect();
    names.retain(|name| !matches!(*name, "PWD" | "SHLVL" | "_"));
    names.sort_unstable();
    // The seat's two, Codex's home, and the turn's own home: no token.
    let expected = [
        "CODEX_HOME",
        "ENV_OUT",
        "HOME",
        "PATH",
        "TMPDIR",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
    ];
    assert_eq!(names, expected);
    let home = seen.lines().find_map(|line| line.strip_prefix("HOME=")).unwrap();
    assert!(home.starts_with(&std::env::temp_dir().display().to_string()), "a home of the turn's own: {home}");
    assert!(!std::path::Path::new(home).exists(), "deleted with the turn's workspace");
}

/// Whether process `pid` still runs (a zombie waiting to be reaped does not).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

#[tokio::test]
async fn d49_a_cli_that_never_connects_ends_at_the_deadline_with_its_process_group_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // Starts a grandchild in its own group, writes both ids, and never
    // connects or says anything.
    let body = format!("sleep 1000 &\necho \"$$ $!\" > '{}'\nsleep 1000", pids.display());
    let command = script(dir.path(), &body);
    let result = turn(cli(Vendor::ClaudeCode, command, BTreeMap::new(), 60_000), 300).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert_eq!(result.error.as_ref().map(|e| e.code.as_str()), Some("turn_cancelled"));
    let written = std::fs::read_to_string(&pids).unwrap();
    let pids: Vec<&str> = written.split_whitespace().collect();
    assert_eq!(pids.len(), 2);
    // The kill runs on this runtime: SIGTERM, then SIGKILL after the grace.
    for _ in 0..100 {
        if pids.iter().all(|pid| !running(pid)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the CLI {} or its child {} still runs", pids[0], pids[1]);
}

/// The version probe a seat's CLI gets before the run (`list`, `run` and
/// `certify` make it) is a process the harness starts: a CLI that leaves
/// a process behind holding the probe's stdout neither holds the command
/// up until that process ends nor outlives it. Before, the probe read
/// stdout to its end, and so waited as long as the process left behind.
#[test]
fn a_version_probe_waits_for_no_process_its_cli_leaves_behind_and_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let body = format!("echo 1.0.0\nsleep 1000 &\necho $! > '{}'", pids.display());
    let command = script(dir.path(), &body);
    let env = BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]);
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || sent.send(sharedos_mcp::live::cli_version(Vendor::Codex, &command, &env)));
    // A guard against hanging only: the probe's own bound is 20 s.
    let version = received.recv_timeout(Duration::from_secs(60));
    let left = std::fs::read_to_string(&pids).unwrap_or_default().trim().to_string();
    if version.is_err() {
        let _ = std::process::Command::new("kill").arg("-KILL").arg(&left).status();
        panic!("the probe still waits on the process {left} its CLI left behind");
    }
    assert_eq!(version.unwrap().as_deref(), Some("1.0.0"));
    assert!(!left.is_empty(), "the CLI wrote the id of the process it left");
    for _ in 0..100 {
        if !running(&left) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::process::Command::new("kill").arg("-KILL").arg(&left).status();
    panic!("the process {left} the probed CLI left behind outlived the probe");
}

/// With no home of its own, a probed CLI falls back on the user's real one
/// (Codex writes under `~/.codex` from `--version`): the probe gives it a
/// home, `CODEX_HOME` included, deleted once it has answered.
#[test]
fn a_version_probe_runs_in_a_home_of_its_own_deleted_afterwards() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("env.txt");
    let command = script(dir.path(), &format!("env > '{}'\necho 1.0.0", out.display()));
    let env = BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]);
    assert_eq!(sharedos_mcp::live::cli_version(Vendor::Codex, &command, &env).as_deref(), Some("1.0.0"));
    let seen = std::fs::read_to_string(&out).unwrap();
    let value = |name: &str| seen.lines().find_map(|line| line.strip_prefix(&format!("{name}="))).map(Path::new);
    let home = value("HOME").expect("the probe has a HOME");
    assert!(home.starts_with(std::env::temp_dir()), "a home of the probe's own: {}", home.display());
    assert_eq!(value("CODEX_HOME"), Some(home), "Codex keeps its state there too");
    assert!(value("TMPDIR").is_some_and(|tmp| tmp.starts_with(home.parent().unwrap())));
    assert!(!home.exists(), "deleted once the probe has answered");
}

/// Pi prints its version on stderr; Codex may print a warning there first
/// and its version on stdout. Either way the manifest names the version.
#[test]
fn a_version_probe_reads_stdout_first_and_stderr_when_stdout_says_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let env = BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]);
    let on_stderr = script(dir.path(), "echo 0.73.1 >&2");
    assert_eq!(sharedos_mcp::live::cli_version(Vendor::Pi, &on_stderr, &env).as_deref(), Some("0.73.1"));
    let both = script(dir.path(), "echo 'WARNING: no aliases' >&2\necho codex-cli 0.169.0");
    assert_eq!(sharedos_mcp::live::cli_version(Vendor::Codex, &both, &env).as_deref(), Some("codex-cli 0.169.0"));
    let failing = script(dir.path(), "echo 1.0.0\nexit 3");
    assert_eq!(sharedos_mcp::live::cli_version(Vendor::Codex, &failing, &env), None);
}
