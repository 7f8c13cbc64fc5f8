//! The command's process as the subreaper of everything it starts, and the
//! kill of every descendant still there when it ends.
//!
//! A process whose parent exits is re-parented to its nearest subreaper
//! ancestor, or to init when it has none. A runtime's child that forks a
//! grandchild, puts it in a session of its own and exits would leave that
//! grandchild to init, out of every process group and every scan of this
//! process's descendants. Made the subreaper before anything is started,
//! this process is that grandchild's parent instead, so it is found below
//! this process until it is killed.

use rustix::process::{getpgrp, getpid, kill_process, set_child_subreaper, waitpid, Pid, Signal, WaitOptions};
use std::time::Duration;

/// How many rounds of scanning and killing a kill makes before it gives up
/// on a process that keeps starting children.
pub const KILL_ROUNDS: u32 = 200;
/// The pause between two rounds: long enough for a killed process to be
/// gone from `/proc` or left a zombie, short enough not to be noticed.
pub const KILL_PAUSE: Duration = Duration::from_millis(5);

/// Makes this process the subreaper of everything it starts from now on.
///
/// # Errors
/// When the system refuses (Linux has allowed it since 3.4).
pub fn become_subreaper() -> std::io::Result<()> {
    set_child_subreaper(Some(getpid())).map_err(std::io::Error::from)
}

/// Kills every process below this one until none is left, and reaps them.
/// Call it only when nothing this process still waits for is running: the
/// reaping takes any exited child's status.
pub fn kill_descendants() {
    let me = getpid();
    // A grandchild whose parent dies between two scans comes to this
    // process (already its subreaper, unless the caller forgot), not to init.
    let _ = set_child_subreaper(Some(me));
    for _ in 0..KILL_ROUNDS {
        let living = descendants(me.as_raw_nonzero().get());
        for pid in &living {
            if let Some(pid) = Pid::from_raw(*pid) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
        // Reaped here, as nothing else will wait for them now.
        while let Ok(Some(_)) = waitpid(None, WaitOptions::NOHANG) {}
        if living.is_empty() {
            return;
        }
        std::thread::sleep(KILL_PAUSE);
    }
}

/// Reaps this process's exited children that it did not start itself:
/// orphans re-parented to it as their subreaper, which nothing else waits
/// for and which would otherwise stay zombies, each holding a pid, until
/// the command ends.
///
/// Only a child that is in neither its own process group nor this
/// process's is one: every process the harness starts is put in a group
/// of its own or left in the harness's, so the exit status of none of
/// them is taken from the code that waits for it. An orphan that made a
/// group or a session of its own is left for [`kill_descendants`].
pub fn reap_orphans() {
    let (me, group) = (getpid().as_raw_nonzero().get(), getpgrp().as_raw_nonzero().get());
    for (pid, parent, state, pgid) in processes() {
        if parent == me && state == "Z" && pgid != pid && pgid != group {
            // A zombie's pid and group cannot change before it is reaped.
            let _ = Pid::from_raw(pid).map(|pid| waitpid(Some(pid), WaitOptions::NOHANG));
        }
    }
}

/// Every process in `/proc`: its pid, parent, state letter and group.
fn processes() -> Vec<(i32, i32, String, i32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // The command name, in parentheses, may hold spaces and `)`: the
        // fields after its last `)` are the state, the parent, the group.
        let Some((_, after)) = stat.rsplit_once(')') else { continue };
        let mut fields = after.split_whitespace();
        let state = fields.next().unwrap_or_default().to_string();
        let mut number = || fields.next().and_then(|field| field.parse::<i32>().ok());
        let (Some(parent), Some(group)) = (number(), number()) else { continue };
        found.push((pid, parent, state, group));
    }
    found
}

/// The living (not zombie) processes below `root`, from `/proc`.
#[must_use]
pub fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = processes()
        .into_iter()
        .filter(|(_, _, state, _)| state != "Z")
        .map(|(pid, parent, _, _)| (pid, parent))
        .collect();
    let mut found = vec![root];
    let mut next = 0;
    while next < found.len() {
        let parent = found[next];
        found.extend(parents.iter().filter(|(_, p)| *p == parent).map(|(pid, _)| *pid));
        next += 1;
    }
    found.remove(0);
    found
}
