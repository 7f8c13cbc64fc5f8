//! How a live CLI is started: command, arguments, directory, the exact
//! environment it may see, the mode of the conversation and its bounds.

use crate::transport::TransportError;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Who answers the tool calls the CLI writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChildMode {
    /// The harness speaks SharedOS's eval protocol and waits for the driver:
    /// every written frame goes to stdin as one JSON line.
    #[default]
    Answer,
    /// A real vendor CLI runs its calls elsewhere (its own tools); the
    /// transport only reads. Opening frames are still written (that is how
    /// the prompt arrives), but a tool result written afterwards is dropped
    /// and counted in the diagnostics, never sent: the CLI has no input for
    /// it, and refusing would end a turn whose stream is still worth reading.
    Observe,
}

/// The bounds that keep a misbehaving CLI from hanging or flooding a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessLimits {
    /// Wall time from spawn after which the whole process group is killed
    /// and the channel ends with an error; `None` for no deadline.
    pub deadline: Option<Duration>,
    /// Longest stdout line kept, in bytes, without its newline. A longer
    /// line is skipped (never buffered past this size) and counted.
    pub max_line_bytes: usize,
    /// How many skipped stdout lines (blank, not JSON, not an object, too
    /// long) are tolerated; one more ends the channel with an error.
    pub max_ignored_lines: usize,
    /// How many trailing bytes of stderr are kept for diagnostics.
    pub stderr_tail_bytes: usize,
    /// How many non-JSON stdout lines are kept for diagnostics (the latest).
    pub max_stdout_notes: usize,
    /// Between SIGTERM and SIGKILL when the group is killed.
    pub kill_grace: Duration,
    /// After the CLI exits, how long stdout and stderr may still be read
    /// (a descendant may hold them open).
    pub exit_drain: Duration,
    /// Frames read ahead of the driver; the CLI is not read further until
    /// the driver takes some, so memory stays bounded.
    pub frame_buffer: usize,
}

impl Default for ProcessLimits {
    fn default() -> ProcessLimits {
        ProcessLimits {
            deadline: Some(Duration::from_secs(600)),
            max_line_bytes: 4 * 1024 * 1024,
            max_ignored_lines: 10_000,
            stderr_tail_bytes: 64 * 1024,
            max_stdout_notes: 64,
            kill_grace: Duration::from_millis(500),
            exit_drain: Duration::from_millis(500),
            frame_buffer: 64,
        }
    }
}

impl ProcessLimits {
    /// Checks every bound is usable.
    ///
    /// # Errors
    /// [`TransportError::Invalid`] naming the first zero bound.
    pub fn validate(&self) -> Result<(), TransportError> {
        let zero = [
            ("max_line_bytes", self.max_line_bytes),
            ("max_ignored_lines", self.max_ignored_lines),
            ("frame_buffer", self.frame_buffer),
        ]
        .into_iter()
        .find(|(_, value)| *value == 0);
        match zero {
            Some((name, _)) => Err(TransportError::Invalid(format!("{name} must be at least 1"))),
            None => Ok(()),
        }
    }
}

/// Everything needed to start one live CLI per turn.
///
/// The child's environment is cleared and then holds only the variables
/// named here: values set with [`Launch::env`], and ambient values passed
/// through by name with [`Launch::inherit_env`]. This departs on purpose
/// from SharedOS, which merges over the ambient environment: a conformance
/// run must not leak the operator's credentials to a CLI that was not
/// given them, and a column's result must not depend on who ran it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The executable; a bare name is looked up on the runner's `PATH`.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory; the runner's own when `None`.
    pub cwd: Option<PathBuf>,
    /// Names whose ambient values are passed through when set.
    pub inherit_env: BTreeSet<String>,
    /// Values set explicitly; they win over inherited ones.
    pub env: BTreeMap<String, String>,
    /// Who answers tool calls.
    pub mode: ChildMode,
    /// Close stdin once the opening frames are written (a CLI that reads
    /// its prompt until end of input needs it, e.g. `codex exec -`).
    pub end_input_after_opening: bool,
    /// The bounds.
    pub limits: ProcessLimits,
}

impl Launch {
    /// A launch of `command` with no arguments, an empty environment,
    /// [`ChildMode::Answer`] and default limits.
    #[must_use]
    pub fn new(command: impl Into<String>) -> Launch {
        Launch {
            command: command.into(),
            args: Vec::new(),
            cwd: None,
            inherit_env: BTreeSet::new(),
            env: BTreeMap::new(),
            mode: ChildMode::Answer,
            end_input_after_opening: false,
            limits: ProcessLimits::default(),
        }
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Launch
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Launch {
        self.cwd = Some(cwd.into());
        self
    }

    /// Passes the ambient value of `name` through, when it is set.
    #[must_use]
    pub fn inherit_env(mut self, name: impl Into<String>) -> Launch {
        self.inherit_env.insert(name.into());
        self
    }

    /// Sets `name` to `value` in the child's environment.
    #[must_use]
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Launch {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Sets the mode.
    #[must_use]
    pub fn mode(mut self, mode: ChildMode) -> Launch {
        self.mode = mode;
        self
    }

    /// Closes stdin after the opening frames.
    #[must_use]
    pub fn end_input_after_opening(mut self, end: bool) -> Launch {
        self.end_input_after_opening = end;
        self
    }

    /// Sets the limits.
    #[must_use]
    pub fn limits(mut self, limits: ProcessLimits) -> Launch {
        self.limits = limits;
        self
    }

    /// The child's whole environment, reading ambient values through
    /// `ambient` (so the rule is testable without touching the process's
    /// own environment).
    #[must_use]
    pub fn child_environment(&self, ambient: impl Fn(&str) -> Option<OsString>) -> BTreeMap<String, OsString> {
        let mut vars: BTreeMap<String, OsString> =
            self.inherit_env.iter().filter_map(|name| ambient(name).map(|value| (name.clone(), value))).collect();
        for (name, value) in &self.env {
            vars.insert(name.clone(), OsString::from(value));
        }
        vars
    }
}
