//! Seat files: a runtime seated from outside as a process column
//! (`harness/process/PROTOCOL.md`). The committed seats live in
//! `harness/seats/`; `--seat FILE` adds one from anywhere.

use crate::input::error::{LoadError, Site};
use serde::Deserialize;
use sharedos_conformance_metadata::launch::{Clock, Launch, RelayCommand, SessionLimits, DEFAULT_IDLE_TIMEOUT};
use sharedos_conformance_metadata::vendor::Vendor;
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
    /// A vendor CLI that runs its own loop, served the turn's catalogue
    /// over MCP and started by its vendor's recipe; graded from the record.
    Mcp,
}

/// How a live MCP seat's CLI reaches the turn's server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpTransport {
    /// Streamable HTTP on a loopback port.
    #[default]
    Http,
    /// A stdio server: the harness's relay, which the CLI starts.
    Stdio,
}

/// The model a live MCP seat's CLI talks to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatModel {
    /// The vendor's own model, with the user's credentials.
    #[default]
    Vendor,
    /// The harness's scripted model on loopback: each row's calls and
    /// ending, every request witnessed.
    Scripted,
}

/// What an MCP seat adds to its launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSeat {
    /// Whose CLI: its recipe, and the codec its stdout is read with.
    pub vendor: Vendor,
    /// How it reaches the server.
    pub transport: McpTransport,
    /// Whether the HTTP server asks for a fresh bearer token each turn.
    pub token: bool,
    /// The model its CLI talks to.
    pub model: SeatModel,
    /// How long it may stay silent with stdin open (D50).
    pub idle_timeout: Duration,
    /// The relay a stdio CLI starts; the runner (the CLI binary) sets it.
    pub relay: Option<RelayCommand>,
    /// What its CLI's `--version` printed, once the runner has asked.
    pub cli_version: Option<String>,
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
    idle_timeout_ms: Option<u64>,
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
    /// Scripted, prompted or MCP.
    pub kind: SeatKind,
    /// The program; an MCP seat's defaults to its vendor's CLI.
    #[serde(default)]
    pub command: Option<String>,
    /// An MCP seat's vendor.
    #[serde(default)]
    pub vendor: Option<String>,
    /// An MCP seat's transport.
    #[serde(default)]
    pub transport: Option<McpTransport>,
    /// Whether an MCP seat's HTTP server asks for a bearer token (default yes).
    #[serde(default)]
    pub token: Option<bool>,
    /// An MCP seat's model: the vendor's own (default) or the scripted one.
    #[serde(default)]
    pub model: Option<SeatModel>,
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
    /// The clock: virtual by default, real for an MCP seat.
    #[serde(default)]
    pub clock: Option<Clock>,
    /// One process per run (the default) or per turn; an MCP seat starts
    /// its CLI for each turn.
    #[serde(default)]
    pub process: Option<ProcessScope>,
    /// Bounds; each defaults as `PROTOCOL.md` says.
    #[serde(default)]
    pub limits: SeatLimits,
}

/// A loaded seat: its column and how to start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    /// `process:<name>`, or `mcp:<name>` for an MCP seat.
    pub column_id: String,
    /// The column's label.
    pub label: String,
    /// Scripted, prompted or MCP.
    pub kind: SeatKind,
    /// What an MCP seat adds to its launch.
    pub mcp: Option<McpSeat>,
    /// One process per run or per turn.
    pub process: ProcessScope,
    /// How its process starts.
    pub launch: Launch,
    /// The file it came from.
    pub file: PathBuf,
}

impl Seat {
    /// Whether the seat works in real time: its records carry wall time,
    /// so no two runs of it are alike and it has no golden files.
    #[must_use]
    pub fn on_real_clock(&self) -> bool {
        self.launch.clock == Clock::Real
    }
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
        let mcp = self.mcp_seat(&site)?;
        let command = match (&self.command, &mcp) {
            (Some(command), _) => command.clone(),
            (None, Some(mcp)) => mcp.vendor.executable().to_string(),
            (None, None) => return Err(site.child("command").out_of_bounds("the program a process seat starts")),
        };
        site.child("command").text(&command, 4096)?;
        // An MCP seat's CLI runs in its turn's workspace: a path to it is
        // read from the seat file's folder, as a process seat's cwd is.
        let command = if mcp.is_some() && command.contains('/') && Path::new(&command).is_relative() {
            let joined = folder.join(&command);
            std::path::absolute(&joined).unwrap_or(joined).display().to_string()
        } else {
            command
        };
        let mut env = self.env.clone();
        for (i, name) in self.pass_env.iter().enumerate() {
            site.child("passEnv").index(i).text(name, 256)?;
            if let Ok(value) = std::env::var(name) {
                env.insert(name.clone(), value);
            }
        }
        let limits = self.session_limits(&site)?;
        let cwd = folder.join(self.cwd.as_deref().unwrap_or("."));
        let clock = self.clock.unwrap_or(if mcp.is_some() { Clock::Real } else { Clock::Virtual });
        let launch = Launch { command, args: self.args, cwd: Some(cwd), env, clock, limits };
        let prefix = if mcp.is_some() { "mcp" } else { "process" };
        Ok(Seat {
            column_id: format!("{prefix}:{}", self.name),
            label: self.label,
            kind: self.kind,
            mcp,
            process: if mcp_is(self.kind) { ProcessScope::PerTurn } else { self.process.unwrap_or_default() },
            launch,
            file: file.to_path_buf(),
        })
    }

    fn session_limits(&self, site: &Site<'_>) -> Result<SessionLimits, LoadError> {
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
        let idle_zero = self.limits.idle_timeout_ms == Some(0);
        if limits.max_line_bytes == 0 || limits.busy_timeout.is_zero() || limits.startup_timeout.is_zero() || idle_zero
        {
            return Err(site.child("limits").out_of_bounds("limits above zero"));
        }
        Ok(limits)
    }

    /// What an MCP seat adds, checked; the members only an MCP seat has
    /// are refused on any other, and what an MCP seat cannot have on it.
    fn mcp_seat(&self, site: &Site<'_>) -> Result<Option<McpSeat>, LoadError> {
        let only_mcp = [
            ("vendor", self.vendor.is_some()),
            ("transport", self.transport.is_some()),
            ("token", self.token.is_some()),
            ("model", self.model.is_some()),
            ("limits/idleTimeoutMs", self.limits.idle_timeout_ms.is_some()),
        ];
        if !mcp_is(self.kind) {
            return match only_mcp.iter().find(|(_, given)| *given) {
                Some((key, _)) => Err(pointer(site, key).out_of_bounds("nothing here: only an MCP seat has it")),
                None => Ok(None),
            };
        }
        let not_for_mcp = [
            ("cwd", self.cwd.is_some(), "nothing here: an MCP seat's CLI runs in its turn's workspace"),
            ("clock", self.clock == Some(Clock::Virtual), "`real`: an MCP seat's CLI works in real time"),
            ("process", self.process == Some(ProcessScope::PerRun), "`per-turn`: an MCP seat starts its CLI per turn"),
        ];
        if let Some((key, _, expected)) = not_for_mcp.iter().find(|(_, refused, _)| *refused) {
            return Err(site.child(key).out_of_bounds(*expected));
        }
        let vendor_site = site.child("vendor");
        let Some(vendor) = &self.vendor else {
            return Err(vendor_site.out_of_bounds("the vendor whose CLI an MCP seat starts"));
        };
        let vendor = Vendor::from_id(vendor).ok_or_else(|| {
            vendor_site.unknown_value(format!("one of {} (not `{vendor}`)", Vendor::ALL.map(Vendor::id).join(", ")))
        })?;
        Ok(Some(McpSeat {
            vendor,
            transport: self.transport.unwrap_or_default(),
            token: self.token.unwrap_or(true),
            model: self.model.unwrap_or_default(),
            idle_timeout: self.limits.idle_timeout_ms.map_or(DEFAULT_IDLE_TIMEOUT, Duration::from_millis),
            relay: None,
            cli_version: None,
        }))
    }
}

fn mcp_is(kind: SeatKind) -> bool {
    kind == SeatKind::Mcp
}

/// The site at a `/`-separated path below `site`.
fn pointer<'a>(site: &Site<'a>, path: &str) -> Site<'a> {
    path.split('/').fold(site.clone(), |site, key| site.child(key))
}
