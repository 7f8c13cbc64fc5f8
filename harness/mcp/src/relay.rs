//! The relay a harness starts as its stdio MCP server: it carries the
//! harness's stdin to the turn's socket and the socket's answers to its
//! stdout, byte for byte, and exits when either side closes. Plain threads
//! and blocking I/O: it is a separate, short-lived process with one job.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Why the relay stopped early.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The turn's socket could not be reached.
    #[error("connect to the turn's MCP socket {path}: {source}")]
    Connect {
        /// The socket.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// Copying failed.
    #[error("relay between stdio and the turn's socket: {0}")]
    Copy(#[from] std::io::Error),
}

/// Relays `input` to the socket at `socket` and the socket to `output`
/// until the socket closes (the turn ended) or `input` ends.
///
/// # Errors
/// When the socket cannot be reached or a copy fails.
pub fn relay(socket: &Path, mut input: impl Read + Send + 'static, mut output: impl Write) -> Result<(), RelayError> {
    let stream = UnixStream::connect(socket)
        .map_err(|source| RelayError::Connect { path: socket.display().to_string(), source })?;
    let mut to_server = stream.try_clone()?;
    // Input that ends tells the server no more is coming; the answers
    // still owed keep flowing back until the server closes its side.
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut input, &mut to_server);
        let _ = to_server.shutdown(Shutdown::Write);
    });
    let mut from_server = stream;
    let mut buffer = [0_u8; 8192];
    loop {
        let read = from_server.read(&mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        output.write_all(&buffer[..read])?;
        output.flush()?;
    }
}
