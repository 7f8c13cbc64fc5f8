//! MCP's stdio framing (newline-delimited JSON) as the server's transport,
//! over any byte stream.
//!
//! Each line is read as rmcp's own codec reads it (a byte-order mark and a
//! trailing `\r` dropped, a notification of a method MCP does not define
//! ignored). A line that is not JSON is ignored: with no id there is no one
//! to answer, and answering garbage invites a peer that echoes it into an
//! error storm. JSON that is not a message is answered `-32600` here rather
//! than by the codec, because the codec's answer leaves out `id`, and
//! JSON-RPC 2.0 §5 requires it on every response: the request's own id
//! when it has a usable one, else `null`.

use bytes::BytesMut;
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError, DEFAULT_MAX_LINE_LENGTH};
use rmcp::transport::Transport;
use serde_json::{json, Value};
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;
use tokio_util::codec::Decoder;

/// What an answered line is told.
const INVALID_REQUEST: &str = "Invalid Request: not a JSON-RPC message";
/// How much is read at a time.
const READ_CHUNK: usize = 8 * 1024;

/// The server's end of one newline-delimited JSON connection.
pub struct LineTransport<R, W> {
    read: R,
    buffer: BytesMut,
    /// How much of `buffer` is known to hold no `\n`, so that a long line
    /// arriving in many reads is searched once, not once per read.
    scanned: usize,
    /// Set while the rest of a line longer than the cap is skipped.
    discarding: bool,
    codec: JsonRpcMessageCodec<RxJsonRpcMessage<RoleServer>>,
    /// The answer to a line that was not a message, until it is written.
    owed: Option<Owed>,
    out: Arc<Mutex<Outbox<W>>>,
}

impl<R, W> std::fmt::Debug for LineTransport<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport").field("buffered", &self.buffer.len()).finish_non_exhaustive()
    }
}

/// Where an owed answer stands. `receive` may be dropped at any await, so
/// the answer is kept until it is wholly handed to the outbox and flushed.
enum Owed {
    /// Not yet in the outbox.
    Queued(Vec<u8>),
    /// In the outbox; only the flush is left.
    Flushing,
}

/// The writing side, shared by every `send` and by `receive`'s answers.
/// A line is appended whole under the lock, and what a cancelled flush
/// did not write stays at the front of `unsent`, so lines never interleave.
struct Outbox<W> {
    write: Option<W>,
    unsent: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Outbox<W> {
    async fn flush(&mut self) -> io::Result<()> {
        let Some(write) = self.write.as_mut() else {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the connection is closed"));
        };
        while !self.unsent.is_empty() {
            let written = write.write(&self.unsent).await?;
            if written == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.unsent.drain(..written);
        }
        write.flush().await
    }
}

/// One step of reading a line.
enum Line {
    /// A whole line, its `\n` included.
    Read(BytesMut),
    /// The peer closed its side, or reading failed.
    Ended,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading `read` and writing `write`.
    pub fn new(read: R, write: W) -> LineTransport<R, W> {
        LineTransport {
            read,
            buffer: BytesMut::new(),
            scanned: 0,
            discarding: false,
            codec: JsonRpcMessageCodec::default(),
            owed: None,
            out: Arc::new(Mutex::new(Outbox { write: Some(write), unsent: Vec::new() })),
        }
    }

    /// The next whole line, at most [`DEFAULT_MAX_LINE_LENGTH`] bytes; a
    /// longer one is skipped. Safe to drop at its await: what was read stays
    /// in the buffer.
    async fn next_line(&mut self) -> Line {
        loop {
            let unscanned = self.buffer.get(self.scanned..).unwrap_or_default();
            if let Some(end) = unscanned.iter().position(|b| *b == b'\n') {
                let line = self.buffer.split_to(self.scanned + end + 1);
                self.scanned = 0;
                if std::mem::take(&mut self.discarding) {
                    continue;
                }
                return Line::Read(line);
            }
            self.scanned = self.buffer.len();
            if self.discarding || self.buffer.len() > DEFAULT_MAX_LINE_LENGTH {
                self.buffer.clear();
                self.scanned = 0;
                self.discarding = true;
            }
            self.buffer.reserve(READ_CHUNK);
            match self.read.read_buf(&mut self.buffer).await {
                Ok(0) | Err(_) => return Line::Ended,
                Ok(_) => {}
            }
        }
    }

    /// Writes the owed answer, if any. Safe to drop at its awaits.
    async fn pay_owed(&mut self) -> io::Result<()> {
        let Some(owed) = &mut self.owed else { return Ok(()) };
        let mut out = self.out.lock().await;
        if let Owed::Queued(answer) = std::mem::replace(owed, Owed::Flushing) {
            out.unsent.extend_from_slice(&answer);
        }
        out.flush().await?;
        self.owed = None;
        Ok(())
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = Arc::clone(&self.out);
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        async move {
            let line = line.map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))?;
            let mut out = out.lock().await;
            out.unsent.extend_from_slice(&line);
            out.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.pay_owed().await.ok()?;
            let Line::Read(mut line) = self.next_line().await else { return None };
            let unread = line.clone();
            match self.codec.decode(&mut line) {
                Ok(Some(message)) => return Some(message),
                Err(JsonRpcMessageCodecError::Serde(error))
                    if error.classify() == serde_json::error::Category::Data =>
                {
                    self.owed = Some(Owed::Queued(invalid_request(&unread)));
                }
                // Not JSON, or a notification MCP does not define: ignored.
                Ok(None) | Err(_) => {}
            }
        }
    }

    /// Drops the writing side without flushing it: the turn's teardown
    /// must not wait on a peer that has stopped reading.
    async fn close(&mut self) -> Result<(), io::Error> {
        drop(self.out.lock().await.write.take());
        Ok(())
    }
}

/// The `-32600` answer to `line`, JSON that is not a message.
fn invalid_request(line: &[u8]) -> Vec<u8> {
    let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let id = serde_json::from_slice::<Value>(text).ok().and_then(|value| usable_id(&value).cloned());
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": { "code": -32600, "message": INVALID_REQUEST },
    });
    let mut bytes = answer.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// The id a message carries that an answer can be sent under: a string or
/// a number (JSON-RPC 2.0 §4).
#[must_use]
pub fn usable_id(message: &Value) -> Option<&Value> {
    message.get("id").filter(|id| id.is_string() || id.is_number())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_carries_the_usable_id_or_null() {
        let id = |line: &str| {
            let answer: Value = serde_json::from_slice(&invalid_request(line.as_bytes())).ok()?;
            assert_eq!(answer["error"]["code"], json!(-32600));
            answer.get("id").cloned()
        };
        assert_eq!(id("{\"id\":\"a\",\"x\":1}\n"), Some(json!("a")));
        assert_eq!(id("\u{feff}{\"id\":7}\r\n"), Some(json!(7)));
        assert_eq!(id("{\"id\":{}}\n"), Some(Value::Null));
        assert_eq!(id("{\"x\":1}\n"), Some(Value::Null));
        assert_eq!(id("[1]\n"), Some(Value::Null));
    }
}
