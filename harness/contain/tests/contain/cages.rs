//! A cage per seat: killing one kills everything its process started,
//! however it forked, and nothing of another's. On a host without usable
//! cgroups [`Cage::new`] must say so and the mechanism is the process group.

use sharedos_contain::cage::{mechanism, Cage, Mechanism};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A runtime that forks a child, which forks a grandchild and exits; the
/// grandchild leaves for a session of its own, ignores SIGTERM and SIGHUP,
/// writes its pid to `argv[1]` and sleeps. The runtime sleeps too.
const DOUBLE_FORK: &str = r#"
import os, signal, sys, time
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        with open(sys.argv[1] + ".partial", "w") as out:
            out.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".partial", sys.argv[1])
        time.sleep(300)
    os._exit(0)
time.sleep(300)
"#;

fn env() -> BTreeMap<String, String> {
    std::env::var("PATH").map(|path| BTreeMap::from([("PATH".to_string(), path)])).unwrap_or_default()
}

/// The runtime, started in `cage`, and the pid its grandchild wrote.
fn start_in(cage: &Cage, pid_file: &Path) -> (Child, u32) {
    let args = vec!["-c".to_string(), DOUBLE_FORK.to_string(), pid_file.display().to_string()];
    let wrapped = cage.wrap("python3", &args, &env(), None).expect("python3 is on PATH");
    let child = Command::new(&wrapped.program)
        .args(&wrapped.args)
        .env_clear()
        .envs(env())
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    wait_until("the grandchild's start", || pid_file.is_file());
    (child, std::fs::read_to_string(pid_file).unwrap().trim().parse().unwrap())
}

/// Waits (a minute at most: a watchdog) until `ready` says so.
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(60), "{what} never happened");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` is a process that has not ended (a zombie has).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, after)| !after.trim_start().starts_with('Z')))
}

#[test]
fn killing_a_cage_kills_a_grandchild_that_left_the_session_and_nothing_of_another_cage() {
    let (Some(first), Some(second)) = (Cage::new(), Cage::new()) else {
        assert_eq!(mechanism(), Mechanism::ProcessGroup, "no cage made, yet cgroups said usable");
        eprintln!("no usable cgroups here: seats are kept by their process groups");
        return;
    };
    assert_eq!(mechanism(), Mechanism::Cgroup);
    let files = tempfile::tempdir().unwrap();
    let (mut runtime, grandchild) = start_in(&first, &files.path().join("first"));
    let (mut other, other_grandchild) = start_in(&second, &files.path().join("second"));
    assert!(first.holds(runtime.id()) && first.holds(grandchild), "the first runtime and its grandchild are in");
    assert!(second.holds(other.id()) && second.holds(other_grandchild));
    first.kill();
    let _ = runtime.wait();
    wait_until("the first grandchild's end", || !alive(grandchild));
    assert!(!first.dir().exists(), "the cage is removed");
    assert!(alive(other.id()) && alive(other_grandchild), "the other cage's processes are left alone");
    let second_dir = second.dir().to_path_buf();
    drop(second);
    let _ = other.wait();
    wait_until("the second grandchild's end", || !alive(other_grandchild));
    assert!(!second_dir.exists());
    drop(first);
}

#[test]
fn a_caged_process_sees_exactly_the_environment_it_is_given() {
    let Some(cage) = Cage::new() else { return };
    let env = BTreeMap::from([("A".to_string(), "1".to_string()), ("PWD".to_string(), "/given".to_string())]);
    let wrapped = cage.wrap("/usr/bin/env", &[], &env, None).unwrap();
    let output = Command::new(&wrapped.program).args(&wrapped.args).env_clear().envs(&env).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut seen: Vec<String> = String::from_utf8(output.stdout).unwrap().lines().map(str::to_string).collect();
    seen.sort();
    assert_eq!(seen, ["A=1", "PWD=/given"]);
}
