//! The turn's server over streamable HTTP on loopback: bound to
//! `127.0.0.1` on a free port, at `/mcp`, behind a bearer token when the
//! seat asks for one.
//!
//! rmcp's `StreamableHttpService` speaks the protocol (sessions, the
//! `mcp-session-id` header, 404 for an unknown session, 405 for another
//! method). In front of it sits a small gate for what rmcp leaves to its
//! host or answers otherwise: any path but `/mcp` is 404, a missing or
//! wrong token is 401 with a `www-authenticate` challenge (the token read
//! as [`crate::bearer`] says), a body that is not one JSON-RPC message is
//! 400 with a JSON-RPC error (`-32700` without a usable id, `-32600` with
//! one or for a batch) rather than rmcp's 415, and a session `DELETE` is
//! answered 200 once the session is ended, or 404 when it is not known.
//! The token is checked on the request's head, before its body is read;
//! a body declared or found longer than [`MAX_BODY_BYTES`] is 413, read no
//! further than the limit; and at most
//! [`MAX_CONNECTIONS`](sharedos_scripted_model::admission::MAX_CONNECTIONS)
//! connections are served at once.

use crate::bearer::RequiredToken;
use crate::lines::usable_id;
use crate::server::McpToolServer;
use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, Limited};
use hyper::body::{Body as HttpBody, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use sharedos_scripted_model::admission::{Admission, MAX_CONNECTIONS};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The one path the server answers on.
pub const MCP_PATH: &str = "/mcp";
/// The challenge sent with a 401.
pub const BEARER_CHALLENGE: &str = "Bearer realm=\"sharedos\"";
/// The largest request body read, in bytes; a longer one is 413.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The header naming a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

type Body = BoxBody<Bytes, Infallible>;
type Service = StreamableHttpService<McpToolServer, LocalSessionManager>;

/// A server serving one turn's catalogue over HTTP until closed.
#[derive(Debug)]
pub struct HttpServing {
    address: SocketAddr,
    stop: CancellationToken,
    accepting: tokio::task::JoinHandle<()>,
}

/// What the gate checks before rmcp sees a request.
#[derive(Debug, Clone)]
struct Gate {
    token: Option<RequiredToken>,
    /// The sessions rmcp keeps, so that a `DELETE` can be told whether the
    /// session it names exists.
    sessions: Arc<LocalSessionManager>,
}

impl HttpServing {
    /// Binds a free loopback port and serves `server` on it, requiring
    /// `token` as a bearer token when one is given.
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub async fn start(server: McpToolServer, token: Option<String>) -> std::io::Result<HttpServing> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let stop = CancellationToken::new();
        // A turn is short: no keep-alive pings or retry hints, and plain
        // JSON answers where rmcp can give them.
        let config = StreamableHttpServerConfig::default()
            .with_sse_keep_alive(None)
            .with_sse_retry(None)
            .with_json_response(true)
            .with_cancellation_token(stop.child_token());
        let sessions = Arc::new(LocalSessionManager::default());
        let service: Service = StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&sessions), config);
        let gate = Gate { token: token.as_deref().map(RequiredToken::new), sessions };
        let accepting = tokio::spawn(accept(listener, service, gate, stop.clone()));
        Ok(HttpServing { address, stop, accepting })
    }

    /// The URL a harness connects to.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.address)
    }

    /// Stops serving: every session ends, every connection is dropped, and
    /// the port is released before this returns (D44).
    pub async fn close(mut self) {
        self.stop.cancel();
        let _ = (&mut self.accepting).await;
    }
}

impl Drop for HttpServing {
    /// A turn stopped at its hard deadline drops its runtime unfinished:
    /// the accepting task still ends, releasing the port, at its next poll.
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Accepts connections until `stop`, then drops every one still open. At
/// most [`MAX_CONNECTIONS`] are served at once; the next waits in the
/// listen queue until one closes.
async fn accept(listener: TcpListener, service: Service, gate: Gate, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    let admission = Admission::new(MAX_CONNECTIONS);
    // Dropped by another branch, the wait gives its place back, and
    // accept, being cancel-safe, loses no connection.
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
                // A client that keeps its connection (most CLIs do) would
                // otherwise wait out Nagle's algorithm against its delayed
                // ACK: about 40 ms on every call.
                let _ = stream.set_nodelay(true);
                let (service, gate) = (service.clone(), gate.clone());
                let handler = hyper::service::service_fn(move |request| {
                    let (service, gate) = (service.clone(), gate.clone());
                    async move { Ok::<_, Infallible>(gate.handle(request, &service).await) }
                });
                connections.spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), handler)
                        .await;
                    drop(ticket);
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}

impl Gate {
    async fn handle(&self, request: Request<Incoming>, service: &Service) -> Response<Body> {
        if request.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp");
        }
        if !self.authorized(&request) {
            let mut response = plain(StatusCode::UNAUTHORIZED, "Unauthorized: a bearer token is required");
            let challenge = hyper::header::HeaderValue::from_static(BEARER_CHALLENGE);
            response.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, challenge);
            return response;
        }
        let (parts, body) = request.into_parts();
        // A declared length over the limit is refused before a byte is
        // read; an undeclared one is read only up to the limit.
        let too_large = || plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large: the body exceeds 4 MiB");
        if HttpBody::size_hint(&body).lower() > MAX_BODY_BYTES as u64 {
            return too_large();
        }
        let bytes = match Limited::new(body, MAX_BODY_BYTES).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(_) => return too_large(),
        };
        if parts.method == hyper::Method::POST {
            if let Err(error) = one_message(&bytes) {
                return json_rpc_error(error);
            }
        }
        let ends_session = parts.method == hyper::Method::DELETE;
        if ends_session && !self.knows_named_session(&parts.headers).await {
            return plain(StatusCode::NOT_FOUND, "Not Found: no such session");
        }
        let mut response = service.handle(Request::from_parts(parts, Full::new(bytes))).await;
        // rmcp answers a session it has ended 202 Accepted, which
        // RFC 9110 §9.3.5 reserves for a DELETE not yet enacted, and which
        // MCP clients warn about. The session is gone by the time this
        // answer is sent.
        // Of the two statuses for an enacted DELETE, 200 and 204, it is 200
        // because SharedOS's own server answers an enacted DELETE 200.
        if ends_session && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        response
    }

    /// Whether the request carries the configured token.
    fn authorized<B>(&self, request: &Request<B>) -> bool {
        let Some(token) = &self.token else { return true };
        token
            .presented_in(request.headers().get(hyper::header::AUTHORIZATION).map(hyper::header::HeaderValue::as_bytes))
    }

    /// False only when the request names a session that does not exist
    /// (ended, or never opened): the MCP transport answers such a request
    /// 404. A request naming none is left to rmcp, which refuses it 400.
    async fn knows_named_session(&self, headers: &hyper::HeaderMap) -> bool {
        let Some(named) = headers.get(SESSION_HEADER).and_then(|value| value.to_str().ok()) else { return true };
        !matches!(self.sessions.has_session(&Arc::from(named)).await, Ok(false))
    }
}

/// Why a POST body is not one JSON-RPC message: the JSON-RPC error it
/// earns, under which id.
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    /// `-32700` without a usable id, `-32600` with one, or for a batch.
    pub code: i64,
    /// What is wrong, in words.
    pub message: &'static str,
    /// The request's id, or `null`.
    pub id: Value,
}

/// Accepts a body holding exactly one JSON-RPC message.
///
/// # Errors
/// [`Unreadable`] for any other body.
pub fn one_message(body: &[u8]) -> Result<(), Unreadable> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return Err(Unreadable { code: -32700, message: "Parse error: the body is not JSON", id: Value::Null });
    };
    if !value.is_object() {
        let message = match &value {
            Value::Array(items) if items.is_empty() => "Invalid Request: an empty batch",
            Value::Array(_) => "Invalid Request: batches are not supported",
            _ => "Invalid Request: not a JSON-RPC message",
        };
        return Err(Unreadable { code: -32600, message, id: Value::Null });
    }
    if serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()).is_ok() {
        return Ok(());
    }
    match usable_id(&value) {
        Some(id) => {
            Err(Unreadable { code: -32600, message: "Invalid Request: not a JSON-RPC message", id: id.clone() })
        }
        None => Err(Unreadable { code: -32700, message: "Parse error: no usable id", id: Value::Null }),
    }
}

fn json_rpc_error(error: Unreadable) -> Response<Body> {
    let body = json!({ "jsonrpc": "2.0", "id": error.id, "error": { "code": error.code, "message": error.message } });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = StatusCode::BAD_REQUEST;
    let json = hyper::header::HeaderValue::from_static("application/json");
    response.headers_mut().insert(hyper::header::CONTENT_TYPE, json);
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_is_not_one_message_earns_its_json_rpc_error() {
        let code = |body: &str| one_message(body.as_bytes()).err().map(|e| (e.code, e.id));
        assert_eq!(code("{not json"), Some((-32700, Value::Null)));
        assert_eq!(code("[]"), Some((-32600, Value::Null)));
        assert_eq!(code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), Some((-32600, Value::Null)));
        assert_eq!(code("7"), Some((-32600, Value::Null)));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":"a","nonsense":true}"#), Some((-32600, json!("a"))));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":{},"nonsense":true}"#), Some((-32700, Value::Null)));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(code(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
    }
}
