//! Seat files: a runtime seated from outside as a process column
//! (`harness/process/PROTOCOL.md`). The committed seats live in
//! `harness/seats/`; `--seat FILE` adds one from anywhere.

use crate::input::error::{LoadError, Site};
use serde::Deserialize;
use sharedos_process::launch::{Launch, SessionLimits};
use sharedos_process::message::Clock;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Folder of the committed seats under the suite root.
pub const SEATS_DIR: &str = "harness/seats";

/// What the runtime is given, and where its receipts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatKind {
    /// Each row's attack script; the runtime reports its own receipts.
    Scripted,
    /// What a live seat is given; receipts are read from the record.
    Prompted,
}

/// How many processes a seat runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessScope {
    /// One per worker of a run, serving every turn it runs.
    #[default]
    PerRun,
    /// One per turn.
    PerTurn,
}

/// A seat's bounds, in milliseconds and bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeatLimits {
    startup_timeout_ms: Option<u64>,
    busy_timeout_ms: Option<u64>,
    max_line_bytes: Option<usize>,
    max_ignored_lines: Option<usize>,
    stderr_tail_bytes: Option<usize>,
    shutdown_grace_ms: Option<u64>,
}

/// A seat file as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeatFile {
    /// Editor hint, ignored.
    #[serde(rename = "$schema", default)]
    schema: Option<String>,
    /// The column is `process:<name>`.
    pub name: String,
    /// The column's label in reports.
    pub label: String,
    /// Prose.
    #[serde(default)]
    pub description: Option<String>,
    /// Scripted or prompted.
    pub kind: SeatKind,
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its working directory, relative to the seat file's folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Variables set for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables passed through from the harness's own environment.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// The clock.
    #[serde(default = "virtual_clock")]
    pub clock: Clock,
    /// One process per run (the default) or per turn.
    #[serde(default)]
    pub process: ProcessScope,
    /// Bounds; each defaults as `PROTOCOL.md` says.
    #[serde(default)]
    pub limits: SeatLimits,
}

fn virtual_clock() -> Clock {
    Clock::Virtual
}

/// A loaded seat: its column and how to start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    /// `process:<name>`.
    pub column_id: String,
    /// The column's label.
    pub label: String,
    /// Scripted or prompted.
    pub kind: SeatKind,
    /// One process per run or per turn.
    pub process: ProcessScope,
    /// How its process starts.
    pub launch: Launch,
    /// The file it came from.
    pub file: PathBuf,
}

impl SeatFile {
    /// Checks the bounds serde cannot, and resolves the launch.
    ///
    /// # Errors
    /// The first problem, at its pointer.
    pub fn into_seat(self, file: &Path, folder: &Path) -> Result<Seat, LoadError> {
        let site = Site::root(file);
        site.child("name").id(&self.name)?;
        site.child("label").text(&self.label, 64)?;
        site.child("command").text(&self.command, 4096)?;
        let mut env = self.env.clone();
        for (i, name) in self.pass_env.iter().enumerate() {
            site.child("passEnv").index(i).text(name, 256)?;
            if let Ok(value) = std::env::var(name) {
                env.insert(name.clone(), value);
            }
        }
        let defaults = SessionLimits::default();
        let ms = |value: Option<u64>, default: Duration| value.map_or(default, Duration::from_millis);
        let limits = SessionLimits {
            startup_timeout: ms(self.limits.startup_timeout_ms, defaults.startup_timeout),
            busy_timeout: ms(self.limits.busy_timeout_ms, defaults.busy_timeout),
            max_line_bytes: self.limits.max_line_bytes.unwrap_or(defaults.max_line_bytes),
            max_ignored_lines: self.limits.max_ignored_lines.unwrap_or(defaults.max_ignored_lines),
            stderr_tail_bytes: self.limits.stderr_tail_bytes.unwrap_or(defaults.stderr_tail_bytes),
            shutdown_grace: ms(self.limits.shutdown_grace_ms, defaults.shutdown_grace),
        };
        if limits.max_line_bytes == 0 || limits.busy_timeout.is_zero() || limits.startup_timeout.is_zero() {
            return Err(site.child("limits").out_of_bounds("limits above zero"));
        }
        let cwd = folder.join(self.cwd.as_deref().unwrap_or("."));
        let launch = Launch { command: self.command, args: self.args, cwd: Some(cwd), env, clock: self.clock, limits };
        Ok(Seat {
            column_id: format!("process:{}", self.name),
            label: self.label,
            kind: self.kind,
            process: self.process,
            launch,
            file: file.to_path_buf(),
        })
    }
}
