//! One way every command ends on SIGINT or SIGTERM.
//!
//! An interrupted invocation must leave nothing behind: no runtime or CLI
//! still running, no workspace holding a bearer token, no unpacked archive,
//! no half-written output. Three things make that so, whatever the command
//! was doing:
//!
//! - every temporary folder any part of the harness makes (an unpacked
//!   bundle, a live turn's workspace and home) is made under one folder of
//!   this invocation's, so removing that one folder removes them all;
//! - every process the harness started, and everything those started, is
//!   a descendant of this process: found in `/proc` and killed, the
//!   harness made their subreaper first so that none escapes by losing its
//!   parent between two scans;
//! - output files are written while holding [`Interrupt::writing`], which
//!   the signal path takes before it cleans up, so a report, golden file or
//!   bundle is either written whole or not started.
//!
//! Then the process exits 130 (SIGINT) or 143 (SIGTERM). A second signal
//! during the clean-up ends the process at once, with the same code.

use crate::exit::Exit;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How many rounds of scanning and killing the clean-up makes before it
/// gives up on a process that keeps starting children.
const KILL_ROUNDS: u32 = 200;
/// The pause between two rounds: long enough for a killed process to be
/// gone from `/proc` or left a zombie, short enough not to be noticed.
const KILL_PAUSE: Duration = Duration::from_millis(5);

/// The invocation's signal handling and temporary folder.
pub struct Interrupt {
    gate: Arc<Mutex<()>>,
    /// Set once a signal has come: the clean-up is under way.
    cleaning: Arc<AtomicBool>,
    temporary: tempfile::TempDir,
}

/// Why the signal handling could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The invocation's temporary folder.
    #[error("make a temporary folder: {0}")]
    TemporaryFolder(#[source] std::io::Error),
    /// The signal handlers.
    #[error("handle SIGINT and SIGTERM: {0}")]
    Signals(#[source] std::io::Error),
}

impl Interrupt {
    /// Makes the invocation's temporary folder, points every temporary
    /// folder of the process into it, and starts the thread that waits for
    /// SIGINT and SIGTERM.
    ///
    /// # Errors
    /// When the folder cannot be made or the handlers cannot be set.
    pub fn install() -> Result<Self, InstallError> {
        let temporary = tempfile::Builder::new()
            .prefix("sharedos-conformance-")
            .tempdir()
            .map_err(InstallError::TemporaryFolder)?;
        // The only process-wide setting the harness makes: every library's
        // `tempfile` folder lands in this one, with no path to pass down.
        // It can fail only if set before, which nothing else does.
        let _ = tempfile::env::override_temp_dir(temporary.path());
        let cleaning = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&cleaning))
                .map_err(InstallError::Signals)?;
        }
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).map_err(InstallError::Signals)?;
        let gate = Arc::new(Mutex::new(()));
        let held = Arc::clone(&gate);
        let folder = temporary.path().to_path_buf();
        let seen = Arc::clone(&cleaning);
        std::thread::Builder::new()
            .name("interrupt".to_string())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    seen.store(true, Ordering::SeqCst);
                    clean_up_and_exit(signal, &held, &folder);
                }
            })
            .map_err(InstallError::Signals)?;
        Ok(Interrupt { gate, cleaning, temporary })
    }

    /// Ends a command that ran to its end: removes the temporary folder,
    /// unless a signal came first, in which case its clean-up ends the
    /// process (with 130 or 143) and this never returns.
    #[must_use]
    pub fn finish(self, exit: Exit) -> std::process::ExitCode {
        let gate = Arc::clone(&self.gate);
        let held = gate.lock().unwrap_or_else(PoisonError::into_inner);
        if self.cleaning.load(Ordering::SeqCst) {
            drop(held);
            loop {
                std::thread::park();
            }
        }
        drop(self.temporary);
        std::process::ExitCode::from(exit.code())
    }

    /// Holds off the clean-up while output files are written: a signal
    /// arriving meanwhile is acted on when the guard drops, and one that
    /// arrived before makes this wait until the process exits.
    pub fn writing(&self) -> MutexGuard<'_, ()> {
        self.gate.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn clean_up_and_exit(signal: i32, gate: &Mutex<()>, folder: &Path) -> ! {
    // Kept until the exit, so no output is started after the signal.
    let _no_more_writes = gate.lock().unwrap_or_else(PoisonError::into_inner);
    let (name, exit) = if signal == SIGINT { ("SIGINT", Exit::Interrupted) } else { ("SIGTERM", Exit::Terminated) };
    tell!("interrupted by {name}: stopping every runtime and removing temporary files");
    kill_descendants();
    remove_folder(folder);
    std::process::exit(i32::from(exit.code()))
}

/// Kills every process below this one until none is left. Becoming their
/// subreaper first means a grandchild whose parent dies mid-scan comes to
/// this process rather than to init, and is found by the next scan.
fn kill_descendants() {
    use rustix::process::{getpid, kill_process, set_child_subreaper, waitpid, Pid, Signal, WaitOptions};
    let me = getpid();
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

/// The living (not zombie) processes below `root`, from `/proc`.
fn descendants(root: i32) -> Vec<i32> {
    let mut parents: Vec<(i32, i32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // The command name, in parentheses, may hold spaces and `)`: the
        // fields after its last `)` are the state, then the parent.
        let Some((_, after)) = stat.rsplit_once(')') else { continue };
        let mut fields = after.split_whitespace();
        let state = fields.next();
        let Some(parent) = fields.next().and_then(|p| p.parse::<i32>().ok()) else { continue };
        if state != Some("Z") {
            parents.push((pid, parent));
        }
    }
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

/// Removes the invocation's temporary folder. A process killed a moment
/// before may still be closing files in it, so removal is tried again
/// until the folder is gone.
fn remove_folder(folder: &Path) {
    for _ in 0..KILL_ROUNDS {
        match std::fs::remove_dir_all(folder) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => std::thread::sleep(KILL_PAUSE),
            _ if folder.exists() => {}
            _ => return,
        }
    }
}
