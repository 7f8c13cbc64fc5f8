//! The turn's server over MCP's stdio framing (newline-delimited JSON):
//! on any byte stream, and on a Unix socket that a harness reaches through
//! a relay it starts as its stdio MCP server (`sharedos-conformance
//! mcp-relay <socket>`).
//!
//! [`LineTransport`] reads and writes the framing: a line that is not JSON
//! is ignored, and JSON that is not a message is answered `-32600` under
//! its id, or under `"id": null` when it has no usable one.

use crate::lines::LineTransport;
use crate::server::McpToolServer;
use rmcp::ServiceExt;
use sharedos_scripted_model::admission::{Admission, MAX_CONNECTIONS};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::UnixListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Serves one connection until the client leaves or `stop` is cancelled.
pub async fn serve_stream<S>(server: McpToolServer, stream: S, stop: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(stream);
    let Ok(running) = server.serve_with_ct(LineTransport::new(read, write), stop).await else { return };
    let _ = running.waiting().await;
}

/// A server answering every connection to one Unix socket until closed.
#[derive(Debug)]
pub struct SocketServing {
    path: PathBuf,
    stop: CancellationToken,
    accepting: tokio::task::JoinHandle<()>,
}

impl SocketServing {
    /// Listens on a new socket at `path` and serves `server` to each
    /// connection made to it.
    ///
    /// # Errors
    /// When the socket cannot be created there.
    pub fn start(server: McpToolServer, path: &Path) -> std::io::Result<SocketServing> {
        let listener = UnixListener::bind(path)?;
        let stop = CancellationToken::new();
        let accepting = tokio::spawn(accept(listener, server, stop.clone()));
        Ok(SocketServing { path: path.to_path_buf(), stop, accepting })
    }

    /// The socket's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops serving: every connection ends and the socket is removed.
    pub async fn close(mut self) {
        self.stop.cancel();
        let _ = (&mut self.accepting).await;
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for SocketServing {
    /// A turn stopped at its hard deadline drops its runtime unfinished:
    /// the socket is still removed, and the accepting task ends at its next
    /// poll.
    fn drop(&mut self) {
        self.stop.cancel();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Serves each connection until `stop`; at most [`MAX_CONNECTIONS`] at
/// once (a relay opens one), the next waiting in the listen queue.
async fn accept(listener: UnixListener, server: McpToolServer, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    let admission = Admission::new(MAX_CONNECTIONS);
    let admitted = || async {
        let permit = admission.permit().await;
        (permit, listener.accept().await)
    };
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            (permit, accepted) = admitted() => {
                let Some(permit) = permit else { break };
                let Ok((stream, _)) = accepted else { continue };
                let ticket = permit.admit();
                let serving = serve_stream(server.clone(), stream, stop.child_token());
                connections.spawn(async move {
                    serving.await;
                    drop(ticket);
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}
