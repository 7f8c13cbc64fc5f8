//! What a runtime starts out of its process group: a child that forks a
//! grandchild into a session of its own, deaf to SIGTERM, and exits. Where
//! the host gives a seat a cage, discarding the seat kills that grandchild,
//! and nothing of another seat's; where it does not, the grandchild is left
//! for the command's end (the CLI's subreaper kills it then).

use crate::support::{fallback, run_turn, standin};
use sharedos_contain::cage::{mechanism, Mechanism};
use sharedos_model::execution::ExecutionStatus;
use sharedos_process::seat::ProcessSeat;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A seat whose runtime double-forks on its first turn, and the pid of the
/// grandchild it left.
fn double_forked(pid_file: &Path) -> (Rc<ProcessSeat>, u32) {
    let mut launch = standin("double_forks");
    launch.args.push(pid_file.display().to_string());
    let seat = Rc::new(ProcessSeat::new(launch, fallback()));
    let turn = run_turn(&seat, 10_000);
    assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "{:?}", turn.result.error);
    (seat, std::fs::read_to_string(pid_file).unwrap().trim().parse().unwrap())
}

/// Whether `pid` still runs (a zombie does not).
fn runs(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_some_and(|state| state != "Z")
}

/// Waits (ten seconds at most: a watchdog) for `pid` to stop running.
fn ended(pid: u32) -> bool {
    let start = Instant::now();
    while runs(pid) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    !runs(pid)
}

/// Kills what a failed assertion would leave running.
struct Sweep(Vec<u32>);

impl Drop for Sweep {
    fn drop(&mut self) {
        for pid in self.0.iter().filter(|pid| runs(**pid)) {
            let _ = std::process::Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
        }
    }
}

#[test]
fn a_discarded_seat_takes_what_left_its_session_with_it_and_nothing_of_another_seats() {
    let files = tempfile::tempdir().unwrap();
    let (first, grandchild) = double_forked(&files.path().join("first"));
    let (second, other_grandchild) = double_forked(&files.path().join("second"));
    let _sweep = Sweep(vec![grandchild, other_grandchild]);
    assert!(runs(grandchild) && runs(other_grandchild));
    first.discard(0);
    match mechanism() {
        Mechanism::Cgroup => assert!(ended(grandchild), "the first seat's cage was not killed whole"),
        Mechanism::ProcessGroup => assert!(runs(grandchild), "outside the group, it is left for the command's end"),
    }
    assert!(runs(other_grandchild), "another seat's process was killed");
    second.discard(0);
    if mechanism() == Mechanism::Cgroup {
        assert!(ended(other_grandchild));
    }
}
