//! Reaping what is re-parented to a subreaper: an orphan left in a group
//! that is not its own is reaped; a child started in a group of its own,
//! as the harness starts every process it waits for, is left to its waiter.
//! This binary is made a subreaper for it (the cage tests beside it only
//! see their orphans re-parented here rather than to init).

use sharedos_contain::descendants::{become_subreaper, reap_orphans};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The state letter of `pid`, `None` once it is gone (reaped).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next())
}

/// Waits (a minute at most: a watchdog) until `pid` is a zombie.
fn until_zombie(pid: u32) {
    let start = Instant::now();
    while state(pid) != Some('Z') {
        assert!(start.elapsed() < Duration::from_secs(60), "{pid} never exited: {:?}", state(pid));
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn an_orphan_is_reaped_and_a_child_in_a_group_of_its_own_is_left_to_its_waiter() {
    become_subreaper().unwrap();
    // A leader that starts a short sleeper in its group, says its pid and
    // exits: the sleeper is re-parented here, and exits a moment later.
    let mut leader = Command::new("/bin/sh")
        .args(["-c", "sleep 0.2 </dev/null >/dev/null 2>&1 & echo $!"])
        .process_group(0)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    leader.stdout.take().unwrap().read_to_string(&mut said).unwrap();
    let orphan: u32 = said.trim().parse().unwrap();
    assert!(leader.wait().unwrap().success());
    // A child of this process's own, exited and not yet waited for.
    let mut own = Command::new("/bin/sh").args(["-c", "exit 7"]).process_group(0).spawn().unwrap();
    until_zombie(orphan);
    until_zombie(own.id());
    reap_orphans();
    assert_eq!(state(orphan), None, "the orphan was reaped");
    assert_eq!(state(own.id()), Some('Z'), "a child started in a group of its own is its waiter's");
    assert_eq!(own.wait().unwrap().code(), Some(7), "its status is still there for its waiter");
}
