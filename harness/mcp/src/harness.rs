//! What the runtime seats: a harness that runs its own loop, connects to
//! the served catalogue, and writes its ending on stdout in its vendor's
//! stream shape.

use futures::future::LocalBoxFuture;
use tokio::io::DuplexStream;

/// How the harness reaches the turn's server.
#[derive(Debug)]
pub enum Connection {
    /// One end of an in-memory stream carrying MCP's stdio framing
    /// (newline-delimited JSON), on the cell's own runtime and clock.
    InMemory(DuplexStream),
}

/// What a harness is started with.
#[derive(Debug)]
pub struct HarnessLaunch {
    /// The turn's execution id.
    pub execution_id: String,
    /// The prompt the seat composed.
    pub prompt: String,
    /// Where the catalogue is served.
    pub connection: Connection,
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
}

/// A harness the MCP runtime can seat.
pub trait McpHarness {
    /// The harness's id (`claude-code`, …), as records name it.
    fn id(&self) -> &str;

    /// Runs the harness for one turn until it exits. The runtime stops
    /// polling it when the turn's hard signal fires.
    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit>;
}
