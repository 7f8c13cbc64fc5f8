//! What the runtime seats: a harness that runs its own loop, connects to
//! the served catalogue, and writes its ending on stdout in its vendor's
//! stream shape.

use futures::future::LocalBoxFuture;
use sharedos_port::signal::AbortSignal;
use std::path::PathBuf;
use tokio::io::DuplexStream;

/// How a harness asks to reach the turn's server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// An in-memory stream on the cell's own runtime and clock: what the
    /// committed column's scripted client uses, so virtual time stays exact.
    #[default]
    InMemory,
    /// Streamable HTTP on a loopback port (a live CLI, on a real clock).
    Http,
    /// A stdio MCP server the harness starts itself: a relay command that
    /// carries its stdin and stdout to the turn's socket.
    Stdio,
}

/// Where the catalogue is served, as the harness is told it.
#[derive(Debug)]
pub enum Connection {
    /// One end of an in-memory stream carrying MCP's stdio framing
    /// (newline-delimited JSON).
    InMemory(DuplexStream),
    /// A streamable HTTP endpoint.
    Http {
        /// `http://127.0.0.1:<port>/mcp`.
        url: String,
        /// The bearer token the server requires, when it requires one.
        token: Option<String>,
    },
    /// The command a harness runs as its stdio MCP server.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// What a harness is started with.
#[derive(Debug)]
pub struct HarnessLaunch {
    /// The turn's execution id.
    pub execution_id: String,
    /// The prompt the seat composed.
    pub prompt: String,
    /// The MCP server's name: the harness's alias namespace.
    pub server_name: String,
    /// Where the catalogue is served.
    pub connection: Connection,
    /// A scratch folder for the harness's config files, deleted when the
    /// turn ends; `None` for an in-memory harness.
    pub workspace: Option<PathBuf>,
    /// The turn's hard signal: once it fires the harness is stopped and
    /// [`McpHarness::run`] returns [`HarnessExit::Stopped`].
    pub signal: AbortSignal,
}

/// How a harness ended, as a process would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HarnessExit {
    /// It ran and exited with `code`, having written `stdout`, one line per
    /// frame.
    Exited {
        /// The exit code.
        code: i32,
        /// What it wrote on stdout.
        stdout: Vec<String>,
    },
    /// It could not be started.
    NotStarted {
        /// Why.
        detail: String,
    },
    /// The turn's hard signal fired first and the harness was stopped.
    Stopped,
}

/// A harness the MCP runtime can seat.
pub trait McpHarness {
    /// The harness's id (`claude-code`, …), as records name it.
    fn id(&self) -> &str;

    /// How the harness reaches the server.
    fn transport(&self) -> Transport {
        Transport::InMemory
    }

    /// Runs the harness for one turn until it exits, or until the launch's
    /// signal fires and it has been stopped (nothing of it left running).
    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit>;
}
