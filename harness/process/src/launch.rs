//! How a seat's process is started and bounded.

use crate::message::Clock;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The bounds that keep a misbehaving runtime from hanging or flooding a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLimits {
    /// Real time from spawn until `ready`.
    pub startup_timeout: Duration,
    /// Real time a runtime may stay busy (written to, not yet waiting).
    pub busy_timeout: Duration,
    /// Longest line kept, in bytes, without its newline.
    pub max_line_bytes: usize,
    /// Blank lines tolerated per turn.
    pub max_ignored_lines: usize,
    /// Trailing bytes of stderr kept for diagnostics.
    pub stderr_tail_bytes: usize,
    /// After stdin closes, how long the process may take to exit before its
    /// process group is killed.
    pub shutdown_grace: Duration,
}

impl Default for SessionLimits {
    fn default() -> SessionLimits {
        SessionLimits {
            startup_timeout: Duration::from_secs(10),
            busy_timeout: Duration::from_secs(10),
            max_line_bytes: 1024 * 1024,
            max_ignored_lines: 1000,
            stderr_tail_bytes: 16 * 1024,
            shutdown_grace: Duration::from_millis(500),
        }
    }
}

/// A runtime's command line, environment and bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory (the harness's when `None`).
    pub cwd: Option<PathBuf>,
    /// Every variable it sees: nothing else reaches it.
    pub env: BTreeMap<String, String>,
    /// The clock it works against.
    pub clock: Clock,
    /// Its bounds.
    pub limits: SessionLimits,
}

impl Launch {
    /// `command` with no arguments, no variables, default bounds, virtual time.
    #[must_use]
    pub fn new(command: impl Into<String>) -> Launch {
        Launch {
            command: command.into(),
            args: Vec::new(),
            cwd: None,
            env: BTreeMap::new(),
            clock: Clock::Virtual,
            limits: SessionLimits::default(),
        }
    }
}
