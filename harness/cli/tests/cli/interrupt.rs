//! A signal mid-command: SIGINT or SIGTERM ends `run`, `certify`, a live MCP
//! turn and `verify` of an archive with 130 or 143, no process of theirs left
//! running and no temporary folder left behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_sharedos-conformance");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The binary, with its temporary folders made under `temporary`.
fn binary(temporary: &Path) -> Command {
    let mut command = Command::new(BINARY);
    command.current_dir(root()).env("TMPDIR", temporary);
    command
}

/// Waits (a minute at most) until `ready` says so.
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(60), "{what} never happened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a process that has not ended (a zombie has).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, after)| !after.trim_start().starts_with('Z')))
}

/// Sends `signal` (`INT` or `TERM`) to `child` and returns its exit code.
fn interrupt(mut child: Child, signal: &str) -> Option<i32> {
    let sent = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
    assert!(sent.success());
    child.wait().unwrap().code()
}

fn entries(folder: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().path()).collect();
    found.sort();
    found
}

fn read_pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file).unwrap().split_whitespace().map(|p| p.parse().unwrap()).collect()
}

/// A seat whose runtime, on its first turn, starts a child in a session
/// of its own, writes both pids to the file returned, and hangs.
fn hanging_seat(dir: &Path) -> (PathBuf, PathBuf) {
    let pids = dir.join("pids");
    let seat = serde_json::json!({
        "name": "hangs", "label": "hangs", "kind": "scripted", "command": "python3",
        "args": ["standin.py", "hangs_with_a_child", pids],
        "cwd": root().join("harness/process/tests/standins"), "passEnv": ["PATH"],
    });
    let seat_file = dir.join("hangs.json");
    std::fs::write(&seat_file, seat.to_string()).unwrap();
    (seat_file, pids)
}

#[test]
fn sigint_and_sigterm_end_a_run_with_130_and_143_its_runtime_and_the_runtimes_own_child_killed() {
    let mut ended = 0;
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let temporary = tempfile::tempdir().unwrap();
        let seats = tempfile::tempdir().unwrap();
        let (seat_file, pids) = hanging_seat(seats.path());
        let child = binary(temporary.path())
            .args(["run", "--seat"])
            .arg(&seat_file)
            .args(["--column", "process:hangs", "--case", "bounded-grant"])
            .spawn()
            .unwrap();
        wait_until("the runtime's turn", || pids.is_file());
        let [runtime, its_child] = read_pids(&pids)[..] else { panic!("two pids") };
        assert!(alive(runtime) && alive(its_child));
        assert_eq!(interrupt(child, signal), Some(code), "SIG{signal}");
        wait_until("the runtime's end", || !alive(runtime) && !alive(its_child));
        assert_eq!(entries(temporary.path()), Vec::<PathBuf>::new(), "SIG{signal} left temporary files");
        ended += 1;
    }
    assert_eq!(ended, 2);
}

/// `certify` stopped mid-run writes no bundle, not even part of one, and
/// leaves neither its runtime nor its temporary folder behind.
#[test]
fn sigterm_mid_certify_writes_no_bundle_and_leaves_no_runtime_or_temporary_folder() {
    let temporary = tempfile::tempdir().unwrap();
    let seats = tempfile::tempdir().unwrap();
    let (seat_file, pids) = hanging_seat(seats.path());
    let out = seats.path().join("bundle");
    let child = binary(temporary.path()).arg("certify").arg("--seat").arg(&seat_file).arg("--out").arg(&out).spawn();
    wait_until("the runtime's turn", || pids.is_file());
    let [runtime, its_child] = read_pids(&pids)[..] else { panic!("two pids") };
    assert_eq!(interrupt(child.unwrap(), "TERM"), Some(143));
    wait_until("the runtime's end", || !alive(runtime) && !alive(its_child));
    assert!(!out.exists(), "an interrupted certify left a bundle");
    assert_eq!(entries(seats.path()), [seat_file, pids], "nothing was written beside the bundle's path");
    assert_eq!(entries(temporary.path()), Vec::<PathBuf>::new(), "SIGTERM left temporary files");
}

#[test]
fn an_interrupted_verify_of_an_archive_removes_what_it_unpacked() {
    let temporary = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Large enough that unpacking it is still under way when the signal
    // comes: the signal is sent once the unpacked folder has appeared.
    let big = work.path().join("big.bin");
    std::fs::File::create(&big).unwrap().set_len(600 << 20).unwrap();
    let archive = work.path().join("bundle.tar");
    let packed = Command::new("tar").arg("-C").arg(work.path()).arg("-cf").arg(&archive).arg("big.bin").status();
    assert!(packed.unwrap().success());
    let child = binary(temporary.path()).arg("verify").arg(&archive).spawn().unwrap();
    let unpacking = || {
        std::fs::read_dir(temporary.path())
            .into_iter()
            .flatten()
            .flatten()
            .any(|own| std::fs::read_dir(own.path()).is_ok_and(|mut inside| inside.next().is_some()))
    };
    wait_until("the unpacking", unpacking);
    assert_eq!(interrupt(child, "TERM"), Some(143));
    assert_eq!(entries(temporary.path()), Vec::<PathBuf>::new(), "the unpacked archive was left");
}

#[test]
fn an_interrupted_live_turn_kills_the_cli_and_removes_its_workspace_and_token() {
    let temporary = tempfile::tempdir().unwrap();
    let seats = tempfile::tempdir().unwrap();
    // A CLI that gives its version, and in a turn says where it runs, then
    // waits for ever in its own place.
    let cli = seats.path().join("claude");
    let script = "#!/bin/sh\n[ \"$1\" = --version ] && { echo 1.0.0; exit 0; }\n\
                  echo \"$$ $PWD\" > \"$(dirname \"$0\")/seen.partial\"\n\
                  mv \"$(dirname \"$0\")/seen.partial\" \"$(dirname \"$0\")/seen\"\nexec sleep 300\n";
    std::fs::write(&cli, script).unwrap();
    let made_executable = Command::new("chmod").arg("+x").arg(&cli).status();
    assert!(made_executable.unwrap().success());
    let seat = serde_json::json!({
        "name": "waits", "label": "waits", "kind": "mcp", "vendor": "claude-code", "model": "scripted",
        "command": cli, "transport": "http", "passEnv": ["PATH"],
    });
    let seat_file = seats.path().join("waits.json");
    std::fs::write(&seat_file, seat.to_string()).unwrap();
    let child = binary(temporary.path())
        .args(["run", "--seat"])
        .arg(&seat_file)
        .args(["--column", "mcp:waits", "--case", "bounded-grant"])
        .spawn()
        .unwrap();
    let seen = seats.path().join("seen");
    wait_until("the CLI's start", || seen.is_file());
    let text = std::fs::read_to_string(&seen).unwrap();
    let (pid, cwd) = text.trim().split_once(' ').unwrap();
    let pid: u32 = pid.parse().unwrap();
    assert!(cwd.starts_with(temporary.path().to_str().unwrap()), "the workspace is the invocation's: {cwd}");
    assert_eq!(interrupt(child, "INT"), Some(130));
    wait_until("the CLI's end", || !alive(pid));
    assert!(!Path::new(cwd).exists(), "the workspace, with its bearer token, was left");
    assert_eq!(entries(temporary.path()), Vec::<PathBuf>::new());
}

/// Every living process whose command line holds `marker`.
fn holding(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let Ok(line) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if String::from_utf8_lossy(&line).contains(marker) && alive(pid) {
            found.push(pid);
        }
    }
    found
}

/// Kills whatever still holds its marker when it drops, so that a failed
/// assertion leaves nothing running.
struct Sweep(String);

impl Drop for Sweep {
    fn drop(&mut self) {
        for pid in holding(&self.0) {
            let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
        }
    }
}

/// A seat whose runtime, on its turn, forks a child that forks a grandchild
/// into a session of its own, deaf to SIGTERM and SIGHUP, and exits; then
/// completes the turn (`double_forks`) or hangs (`double_forks_and_hangs`).
/// The grandchild writes its pid to `pid_file`, whose path, unique to the
/// test, is in the command line of every process of the seat.
fn double_forking_seat(dir: &Path, mode: &str, pid_file: &Path) -> PathBuf {
    let seat = serde_json::json!({
        "name": "orphans", "label": "orphans", "kind": "scripted", "command": "python3",
        "args": ["standin.py", mode, pid_file],
        "cwd": root().join("harness/process/tests/standins"), "passEnv": ["PATH"],
    });
    let seat_file = dir.join(format!("{mode}.json"));
    std::fs::write(&seat_file, seat.to_string()).unwrap();
    seat_file
}

/// Run by the heavy stage (`cargo test --workspace --locked -- --ignored heavy::`).
mod heavy {
    use super::*;

    #[test]
    #[ignore = "heavy"]
    fn nothing_a_runtime_started_outlives_a_run_that_ends_or_is_interrupted_with_cgroups_or_without() {
        let mut checked = 0;
        for cgroups in ["on", "off"] {
            for interrupted in [false, true] {
                let temporary = tempfile::tempdir().unwrap();
                let seats = tempfile::tempdir().unwrap();
                let pid_file = seats.path().join("grandchild");
                let marker = pid_file.display().to_string();
                let _sweep = Sweep(marker.clone());
                let mode = if interrupted { "double_forks_and_hangs" } else { "double_forks" };
                let seat_file = double_forking_seat(seats.path(), mode, &pid_file);
                let mut command = binary(temporary.path());
                command.args(["run", "--seat"]).arg(&seat_file).args(["--column", "process:orphans"]);
                command.args(["--case", "bounded-grant"]).stdout(std::process::Stdio::null());
                if cgroups == "off" {
                    command.env("SHAREDOS_CGROUPS", "off");
                }
                let mut child = command.spawn().unwrap();
                let case = format!("cgroups {cgroups}, {}", if interrupted { "SIGINT" } else { "a normal end" });
                wait_until("the grandchild's start", || pid_file.is_file());
                let grandchild: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
                assert!(alive(grandchild), "{case}: the grandchild runs");
                if interrupted {
                    assert_eq!(interrupt(child, "INT"), Some(130), "{case}");
                } else {
                    let start = Instant::now();
                    while child.try_wait().unwrap().is_none() {
                        assert!(start.elapsed() < Duration::from_secs(120), "{case}: the run never ended");
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                // The harness has exited: what it killed may still be on its way out.
                let start = Instant::now();
                while !holding(&marker).is_empty() && start.elapsed() < Duration::from_secs(10) {
                    std::thread::sleep(Duration::from_millis(20));
                }
                assert_eq!(holding(&marker), Vec::<u32>::new(), "{case}: a process of the runtime's outlived the run");
                assert_eq!(entries(temporary.path()), Vec::<PathBuf>::new(), "{case}: temporary files were left");
                checked += 1;
            }
        }
        assert_eq!(checked, 4);
    }
}
