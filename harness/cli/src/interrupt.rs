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
//!   a descendant of this process, which is their subreaper from its start
//!   (so one whose parent exits, however long before, is re-parented here
//!   and not to init): found in `/proc` and killed, on a signal and when
//!   the command ends normally alike;
//! - output files are written while holding [`Interrupt::writing`], which
//!   the signal path takes before it cleans up, so a report, golden file or
//!   bundle is either written whole or not started.
//!
//! Then the process exits 130 (SIGINT) or 143 (SIGTERM). A second signal
//! during the clean-up ends the process at once, with the same code.

use crate::exit::Exit;
use sharedos_contain::descendants::{become_subreaper, kill_descendants, KILL_PAUSE, KILL_ROUNDS};
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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
    /// Becoming the subreaper of what the command starts.
    #[error("become the subreaper of the processes the command starts: {0}")]
    Subreaper(#[source] std::io::Error),
}

impl Interrupt {
    /// Makes the invocation's temporary folder, points every temporary
    /// folder of the process into it, and starts the thread that waits for
    /// SIGINT and SIGTERM.
    ///
    /// # Errors
    /// When the folder cannot be made or the handlers cannot be set.
    pub fn install() -> Result<Self, InstallError> {
        // Before anything is started: a process orphaned at any time stays
        // below this one, to be killed when the command ends.
        become_subreaper().map_err(InstallError::Subreaper)?;
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

    /// Ends a command that ran to its end: kills every process still below
    /// this one (what a runtime or CLI started and left behind, in a
    /// session of its own or not) and removes the temporary folder, unless
    /// a signal came first, in which case its clean-up ends the process
    /// (with 130 or 143) and this never returns.
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
        kill_descendants();
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
    // The seats' cages are not dropped on this path: emptied above, they
    // are removed here.
    sharedos_contain::cage::remove_all();
    remove_folder(folder);
    std::process::exit(i32::from(exit.code()))
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
