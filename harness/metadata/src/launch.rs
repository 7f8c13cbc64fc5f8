//! How a seat's process is started and bounded: what a seat file
//! describes and the process seat obeys.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long a live MCP seat's CLI whose stdin stays open may say nothing
/// before its stdin is closed (D50), when its seat does not say.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Which clock a runtime works against (`clock` in `sharedos-runtime/2`'s
/// `hello`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// The harness's paused clock: time passes only while the runtime waits.
    Virtual,
    /// Wall-clock time, for runtimes with a live model.
    Real,
}

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

/// The command a live MCP seat's CLI starts as its stdio MCP server; the socket's
/// path is appended to `args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayCommand {
    /// The program (the harness binary itself, as a rule).
    pub program: String,
    /// Its arguments before the socket (`["mcp-relay"]`).
    pub args: Vec<String>,
}
