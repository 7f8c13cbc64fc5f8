//! Opening and closing the turn's server on the transport a harness asks
//! for, with the scratch workspace a live harness writes its config into.
//! Closing keeps D44's order: the server first (the port released, the
//! socket removed), then the workspace.

use crate::harness::{Connection, Transport};
use crate::http::HttpServing;
use crate::server::McpToolServer;
use crate::stdio::{serve_stream, SocketServing};
use sharedos_scripted_model::server::fresh_secret;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

/// How many bytes the in-memory stream buffers each way.
const IN_MEMORY_BUFFER: usize = 1 << 16;
/// The socket a stdio relay connects to, inside the workspace.
const SOCKET_NAME: &str = "mcp.sock";

pub use sharedos_conformance_metadata::launch::RelayCommand;

/// What the turn's server is served with beyond its transport.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServeOptions {
    /// Over HTTP, require a fresh bearer token per turn.
    pub token: bool,
    /// Over stdio, the relay the harness starts.
    pub relay: Option<RelayCommand>,
    /// Where workspaces are made; the system's temporary folder by default.
    pub workspace_root: Option<PathBuf>,
}

/// Why the server could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The scratch workspace could not be made.
    #[error("create the harness's workspace: {0}")]
    Workspace(std::io::Error),
    /// No loopback port or socket could be bound.
    #[error("bind the turn's MCP server: {0}")]
    Bind(std::io::Error),
    /// A bearer token could not be drawn.
    #[error("draw a bearer token: {0}")]
    Token(std::io::Error),
    /// A stdio harness was seated without a relay to start.
    #[error("serve over stdio: no relay command is configured")]
    NoRelay,
}

/// A turn's open server. Dropped unclosed (a turn stopped at its hard
/// deadline), it still stops serving and deletes the workspace, in that
/// order: fields drop in declaration order.
#[derive(Debug)]
pub struct Serving {
    open: Open,
    workspace: Option<tempfile::TempDir>,
}

#[derive(Debug)]
enum Open {
    InMemory { stop: tokio_util::sync::DropGuard, task: tokio::task::JoinHandle<()> },
    Http(HttpServing),
    Socket(SocketServing),
}

/// A server open to a harness: how to close it, how the harness reaches it,
/// and the workspace it may write to.
#[derive(Debug)]
pub struct Opened {
    /// Closes the server, then deletes the workspace.
    pub serving: Serving,
    /// What the harness is told.
    pub connection: Connection,
    /// The workspace's path, when there is one.
    pub workspace: Option<PathBuf>,
}

/// Opens `server` over `transport`.
///
/// # Errors
/// When the workspace, the port, the socket or the token cannot be had.
pub async fn open(transport: Transport, server: McpToolServer, options: &ServeOptions) -> Result<Opened, ServeError> {
    if transport == Transport::InMemory {
        let (server_end, harness_end) = tokio::io::duplex(IN_MEMORY_BUFFER);
        let stop = CancellationToken::new();
        let task = tokio::spawn(serve_stream(server, server_end, stop.clone()));
        let serving = Serving { open: Open::InMemory { stop: stop.drop_guard(), task }, workspace: None };
        return Ok(Opened { serving, connection: Connection::InMemory(harness_end), workspace: None });
    }
    let workspace = make_workspace(options.workspace_root.as_deref()).map_err(ServeError::Workspace)?;
    let path = workspace.path().to_path_buf();
    let (open, connection) = if transport == Transport::Http {
        let token = if options.token { Some(fresh_secret().map_err(ServeError::Token)?) } else { None };
        let http = HttpServing::start(server, token.clone()).await.map_err(ServeError::Bind)?;
        let url = http.url();
        (Open::Http(http), Connection::Http { url, token })
    } else {
        let relay = options.relay.clone().ok_or(ServeError::NoRelay)?;
        let socket = SocketServing::start(server, &path.join(SOCKET_NAME)).map_err(ServeError::Bind)?;
        let mut args = relay.args;
        args.push(socket.path().display().to_string());
        (Open::Socket(socket), Connection::Stdio { command: relay.program, args })
    };
    Ok(Opened { serving: Serving { open, workspace: Some(workspace) }, connection, workspace: Some(path) })
}

impl Serving {
    /// Closes the server (releasing its port or socket), then deletes the
    /// workspace: nothing of the turn's serving is left afterwards (D44).
    pub async fn close(self) {
        match self.open {
            Open::InMemory { stop, task } => {
                drop(stop);
                let _ = task.await;
            }
            Open::Http(http) => http.close().await,
            Open::Socket(socket) => socket.close().await,
        }
        if let Some(workspace) = self.workspace {
            remove_workspace(workspace).await;
        }
    }
}

/// How many times the workspace's removal is tried.
const REMOVAL_TRIES: u32 = 50;
/// The pause between two tries.
const REMOVAL_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// Deletes the workspace, which holds the turn's config files (one with
/// the bearer token) and the CLI's home. A CLI's last writes on its way
/// out (a backup of its settings, a straggler killed a moment before) can
/// race the removal, which then fails on a folder no longer empty: it is
/// tried again until the folder is gone.
async fn remove_workspace(workspace: tempfile::TempDir) {
    let path = workspace.keep();
    for _ in 0..REMOVAL_TRIES {
        match std::fs::remove_dir_all(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => tokio::time::sleep(REMOVAL_PAUSE).await,
            _ => return,
        }
    }
}

/// Makes the turn's workspace, readable by its user alone (0700): it holds
/// the bearer token and the CLI's home, which no other local user may read.
fn make_workspace(root: Option<&Path>) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut builder = tempfile::Builder::new();
    builder.prefix("sharedos-mcp-").permissions(std::fs::Permissions::from_mode(0o700));
    match root {
        Some(root) => builder.tempdir_in(root),
        None => builder.tempdir(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_workspace_a_cli_still_writes_into_is_removed_all_the_same() {
        let workspace = tempfile::Builder::new().prefix("sharedos-mcp-test-").tempdir().unwrap();
        let path = workspace.path().to_path_buf();
        let backups = path.join("home/.claude/backups");
        std::fs::create_dir_all(&backups).unwrap();
        std::fs::write(path.join(".mcp.json"), "{\"token\": \"secret\"}").unwrap();
        // A CLI on its way out, writing backups for 100 ms while the
        // workspace is removed under it (it makes its backup folder again,
        // never its home).
        let writer = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut written = 0_u32;
            while started.elapsed() < std::time::Duration::from_millis(100) {
                let _ = std::fs::create_dir(&backups);
                let _ = std::fs::write(backups.join(format!("settings-{written}.json")), "{}");
                written += 1;
            }
            written
        });
        std::thread::sleep(std::time::Duration::from_millis(5));
        remove_workspace(workspace).await;
        let gone = !path.exists();
        let written = writer.join().unwrap();
        let _ = std::fs::remove_dir_all(&path);
        assert!(written > 0);
        assert!(gone, "the workspace, token file and home included, is gone");
    }
}
