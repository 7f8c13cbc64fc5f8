//! The scripted model's HTTP server: one per turn, on a free loopback port,
//! behind a fresh key, closed with the turn, so it never answers a turn
//! that has ended and a stalled reply ends when the turn does.

use crate::admission::{Admission, MAX_CONNECTIONS};
use crate::naming::{presented_name, PresentedName};
use crate::play::{Play, PlayCall, Reply};
use crate::view::{RequestView, Role, Then, Wire};
use crate::{anthropic, responses};
use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{combinators::BoxBody, BodyExt, StreamBody};
use hyper::body::{Body as HttpBody, Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use sha2::{Digest, Sha256};
use sharedos_conformance_metadata::witness::{Answer, Exchange, WitnessLog};
use std::convert::Infallible;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The largest request body read, in bytes; a CLI's system prompt and tool
/// list run to a few hundred KiB. A longer one is answered 413.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// How much of what the canary address is sent is read: it answers
/// anyone, so what it reads is kept small.
const CANARY_BODY_BYTES: usize = 64 * 1024;

/// How long a hung-up reply's begun message stands before the connection drops.
const HANG_UP_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

type Body = BoxBody<Bytes, std::io::Error>;
/// How an API writes a reply: `(reply, name, model, id)`.
type Writer = fn(&Reply<'_>, &PresentedName, &str, &str) -> Wire;

/// Where a CLI reaches the turn's model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEndpoint {
    /// `http://127.0.0.1:<port>`, with no trailing slash.
    pub base_url: String,
    /// The key the server requires (`x-api-key` or a bearer token).
    pub key: String,
}

/// The turn's model, serving until closed.
#[derive(Debug)]
pub struct ModelServer {
    address: SocketAddr,
    key: Arc<str>,
    stop: CancellationToken,
    accepting: tokio::task::JoinHandle<()>,
    admission: Admission,
}

/// What every connection of one turn shares.
#[derive(Debug)]
struct Turn {
    address: SocketAddr,
    play: Play,
    server_name: String,
    key: Arc<str>,
    started: tokio::time::Instant,
    log: Arc<Mutex<WitnessLog>>,
}

impl ModelServer {
    /// Binds a free loopback port and plays `play` to whoever holds the key,
    /// finding tool names as MCP server `server_name`'s, and records into
    /// `log` what it witnesses (kept by its holder also should the turn be
    /// dropped before the server is closed).
    ///
    /// # Errors
    /// When no loopback port can be bound or no key drawn.
    pub async fn start(play: Play, server_name: &str, log: Arc<Mutex<WitnessLog>>) -> std::io::Result<ModelServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let address = listener.local_addr()?;
        let key: Arc<str> = Arc::from(format!("sk-sharedos-{}", fresh_secret()?));
        let turn = Arc::new(Turn {
            address,
            play,
            server_name: server_name.to_string(),
            key: Arc::clone(&key),
            started: tokio::time::Instant::now(),
            log,
        });
        let stop = CancellationToken::new();
        let admission = Admission::new(MAX_CONNECTIONS);
        let accepting = tokio::spawn(accept(listener, turn, admission.clone(), stop.clone()));
        Ok(ModelServer { address, key, stop, accepting, admission })
    }

    /// How many connections it serves now, and the most it served at once
    /// (never more than [`MAX_CONNECTIONS`]).
    #[must_use]
    pub fn connections(&self) -> (usize, usize) {
        (self.admission.serving(), self.admission.most_served())
    }

    /// Where the CLI is pointed.
    #[must_use]
    pub fn endpoint(&self) -> ModelEndpoint {
        ModelEndpoint { base_url: format!("http://{}", self.address), key: self.key.to_string() }
    }

    /// Stops serving: every connection dropped, a held reply with it, and
    /// the port released before this returns.
    pub async fn close(mut self) {
        self.stop.cancel();
        let _ = (&mut self.accepting).await;
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn accept(listener: TcpListener, turn: Arc<Turn>, admission: Admission, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    // A place is taken before the connection: one past the cap waits in
    // the listen queue. Dropped by another branch, the wait gives its
    // place back and accept loses no connection (it is cancel-safe).
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
                let _ = stream.set_nodelay(true);
                let turn = Arc::clone(&turn);
                let handler = hyper::service::service_fn(move |request| {
                    let turn = Arc::clone(&turn);
                    async move { Ok::<_, Infallible>(turn.handle(request).await) }
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

/// Which API a path belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Messages,
    CountTokens,
    Responses,
    Probe,
    Canary,
    Unknown,
}

/// The path of the canary address: a CLI that fetches it fetched the web
/// by a tool of its own.
pub const CANARY_PATH: &str = "/canary";

/// Written in an own tool's arguments, stands for the canary address,
/// which is known once the server has its port.
pub const CANARY_URL: &str = "$SHAREDOS_CANARY_URL";

fn route(method: &hyper::Method, path: &str) -> Route {
    let post = method == hyper::Method::POST;
    match path.trim_end_matches('/') {
        p if post && p.ends_with("/v1/messages/count_tokens") => Route::CountTokens,
        p if post && p.ends_with("/v1/messages") => Route::Messages,
        p if post && p.ends_with("/responses") => Route::Responses,
        "" | "/api/hello" if !post => Route::Probe,
        CANARY_PATH => Route::Canary,
        _ => Route::Unknown,
    }
}

impl Turn {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let path = parts.uri.path().to_string();
        let mut exchange = Exchange {
            method: parts.method.to_string(),
            path: path.clone(),
            body_sha256: None,
            body_bytes: 0,
            offered: Vec::new(),
            returned: Vec::new(),
            answer: Answer::Side,
        };
        let route = route(&parts.method, &path);
        let (wire, answer) = match self.admit(route, &parts.headers, body, &mut exchange).await {
            Ok(bytes) => self.answer(route, &bytes, &mut exchange).await,
            Err(refused) => refused,
        };
        exchange.answer = answer;
        self.log().record(exchange);
        respond(wire)
    }

    /// The body of a request the API answers, read only once its headers
    /// have shown the turn's key (a request without it costs no more than
    /// its head), or the answer to one that is not: a path with no API, a
    /// probe, the canary, a missing key, a body too large.
    async fn admit(
        &self,
        route: Route,
        headers: &hyper::HeaderMap,
        body: Incoming,
        exchange: &mut Exchange,
    ) -> Result<Vec<u8>, (Wire, Answer)> {
        match route {
            Route::Unknown => return Err((text_wire(404, "Not Found: no model API here"), Answer::NotFound)),
            Route::Probe => return Err((text_wire(200, ""), Answer::Side)),
            Route::Canary => {
                // Anyone may fetch the canary, so what it is sent is read
                // only as far as a small bound, for the secrets it carries.
                let (BodyRead::Whole(read) | BodyRead::TooLarge { read, .. }) =
                    read_body(body, CANARY_BODY_BYTES, exchange).await;
                self.look_for_secrets(&read);
                self.log().outside.fetched += 1;
                return Err((text_wire(200, "canary"), Answer::Side));
            }
            Route::Messages | Route::CountTokens | Route::Responses => {}
        }
        if !self.authorized(headers) {
            return Err((text_wire(401, "Unauthorized: the turn's key is required"), Answer::Unauthorized));
        }
        match read_body(body, MAX_BODY_BYTES, exchange).await {
            BodyRead::Whole(bytes) => {
                self.look_for_secrets(&bytes);
                Ok(bytes)
            }
            BodyRead::TooLarge { declared, read } => {
                self.look_for_secrets(&read);
                let text = format!("Payload Too Large: the body exceeds {} MiB", MAX_BODY_BYTES >> 20);
                Err((text_wire(413, &text), Answer::TooLarge { declared }))
            }
        }
    }

    async fn answer(&self, route: Route, bytes: &[u8], exchange: &mut Exchange) -> (Wire, Answer) {
        if route == Route::CountTokens {
            return (anthropic::token_count(), Answer::Side);
        }
        let Ok(body) = serde_json::from_slice::<Value>(bytes) else {
            return (text_wire(400, "Bad Request: the body is not JSON"), Answer::Unreadable);
        };
        let (api, read, write): (&str, fn(&Value) -> RequestView, Writer) = if route == Route::Messages {
            (anthropic::API, anthropic::read, anthropic::write)
        } else {
            (responses::API, responses::read, responses::write)
        };
        let view = read(&body);
        self.log().api = api.to_string();
        exchange.returned.clone_from(&view.returned);
        for returned in &mut exchange.returned {
            returned.text = self.redacted(&returned.text);
        }
        let model = body.get("model").and_then(Value::as_str).unwrap_or("scripted").to_string();
        let reply = if view.role == Role::Loop { self.play.reply(view.asked) } else { Reply::Final };
        let (name, offered) = self.name_of(&reply, &view);
        exchange.offered = self.offered_names(&view);
        if view.role == Role::Loop {
            if let Some(due) = self.play.due_ms(view.asked) {
                tokio::time::sleep_until(self.started + std::time::Duration::from_millis(due)).await;
            }
        }
        let id = format!("sharedos_{}", self.log().exchanges.len());
        let placed = match &reply {
            Reply::Call(_, call) if call.own_tool => Some(self.with_canary_address(call)),
            _ => None,
        };
        let wire = match (&reply, &placed) {
            (Reply::Call(index, _), Some(call)) => write(&Reply::Call(*index, call), &name, &model, &id),
            _ => write(&reply, &name, &model, &id),
        };
        let answer = match (view.role, &reply) {
            (Role::Side, _) => Answer::Side,
            (Role::Loop, Reply::Call(index, call)) => {
                Answer::Call { index: *index, tool: call.tool.clone(), name: name.to_string(), offered }
            }
            (Role::Loop, Reply::Final) => Answer::Final,
            (Role::Loop, Reply::Failure) => Answer::Failure,
            (Role::Loop, Reply::HangUp) => Answer::HangUp,
            (Role::Loop, Reply::Stall) => Answer::Stall,
            (Role::Loop, Reply::CutShort) => Answer::CutShort,
        };
        (wire, answer)
    }

    /// `call` with [`CANARY_URL`] in its arguments' strings replaced by
    /// this server's canary address.
    fn with_canary_address(&self, call: &PlayCall) -> PlayCall {
        let address = format!("http://{}{CANARY_PATH}", self.address);
        let mut call = call.clone();
        for value in call.arguments.values_mut() {
            if let Value::String(text) = value {
                *text = text.replace(CANARY_URL, &address);
            }
        }
        call
    }

    /// `text` with every secret of the play replaced by its label, so the
    /// witness log never keeps one.
    fn redacted(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (label, secret) in &self.play.secrets {
            if !secret.is_empty() {
                text = text.replace(secret.as_str(), &format!("[the {label}]"));
            }
        }
        text
    }

    /// Records the label of every secret of the play that `body` carries.
    fn look_for_secrets(&self, body: &[u8]) {
        let body = String::from_utf8_lossy(body);
        for (label, secret) in &self.play.secrets {
            if !secret.is_empty() && body.contains(secret.as_str()) {
                let mut log = self.log();
                if !log.outside.leaked.contains(label) {
                    log.outside.leaked.push(label.clone());
                }
            }
        }
    }

    /// The witness log; a thread that panicked holding it left it usable.
    fn log(&self) -> std::sync::MutexGuard<'_, WitnessLog> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn name_of(&self, reply: &Reply<'_>, view: &RequestView) -> (PresentedName, bool) {
        match reply {
            Reply::Call(_, call) if call.own_tool => {
                let offered = view.offered.iter().any(|name| name.namespace.is_none() && name.name == call.tool);
                (PresentedName { namespace: None, name: call.tool.clone() }, offered)
            }
            Reply::Call(_, call) => presented_name(&view.offered, &self.server_name, &call.tool),
            _ => (PresentedName { namespace: None, name: String::new() }, false),
        }
    }

    /// The names the request offered for the play's own tools.
    fn offered_names(&self, view: &RequestView) -> Vec<String> {
        let mut names: Vec<String> = self
            .play
            .tools()
            .map(|tool| presented_name(&view.offered, &self.server_name, tool))
            .filter(|(_, offered)| *offered)
            .map(|(name, _)| name.to_string())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Whether the request carries the turn's key, as `x-api-key` or as a
    /// bearer token.
    fn authorized(&self, headers: &hyper::HeaderMap) -> bool {
        let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
        let bearer = header("authorization").and_then(|value| {
            let (scheme, token) = value.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token.trim())
        });
        [header("x-api-key"), bearer].into_iter().flatten().any(|presented| same(presented, &self.key))
    }
}

/// A request's body, as far as it was read.
#[derive(Debug)]
enum BodyRead {
    /// All of it (what came before a broken connection, which then fails
    /// as JSON).
    Whole(Vec<u8>),
    /// More than the limit: refused on its declared length with nothing
    /// read, or once the part read passed the limit (what was read up to it).
    TooLarge { declared: Option<u64>, read: Vec<u8> },
}

/// Reads `body` up to `limit` bytes, stopping at the first frame that
/// would pass it, and notes in `exchange` how many bytes were read and
/// their hash. A body whose declared length is over the limit is refused
/// before any of it is read.
async fn read_body(mut body: Incoming, limit: usize, exchange: &mut Exchange) -> BodyRead {
    let declared = HttpBody::size_hint(&body).exact();
    let mut read = Vec::new();
    if declared.is_some_and(|length| length > u64::try_from(limit).unwrap_or(u64::MAX)) {
        return BodyRead::TooLarge { declared, read };
    }
    let mut hash = Sha256::new();
    let mut over = false;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        let Ok(data) = frame.into_data() else { continue };
        hash.update(&data);
        exchange.body_bytes += data.len();
        if read.len() + data.len() > limit {
            over = true;
            break;
        }
        read.extend_from_slice(&data);
    }
    exchange.body_sha256 = Some(hex::encode(hash.finalize()));
    if over {
        BodyRead::TooLarge { declared, read }
    } else {
        BodyRead::Whole(read)
    }
}

/// Compares in time independent of where the first difference is.
fn same(presented: &str, key: &str) -> bool {
    presented.len() == key.len() && presented.bytes().zip(key.bytes()).fold(0_u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

fn text_wire(status: u16, text: &str) -> Wire {
    Wire { status, content_type: "text/plain", chunks: vec![text.to_string()], then: Then::End }
}

fn respond(wire: Wire) -> Response<Body> {
    let chunks = futures::stream::iter(wire.chunks.into_iter().map(|chunk| Ok(Frame::data(Bytes::from(chunk)))));
    let body: Body = match wire.then {
        Then::End => BodyExt::boxed(StreamBody::new(chunks)),
        Then::Drop => {
            // A pause first, so the begun message reaches the client (hyper
            // writes what it has when the body waits) before the cut.
            let cut = futures::stream::once(async {
                tokio::time::sleep(HANG_UP_AFTER).await;
                Err(std::io::Error::other("the scripted model hung up"))
            });
            BodyExt::boxed(StreamBody::new(chunks.chain(cut)))
        }
        Then::Hold => BodyExt::boxed(StreamBody::new(chunks.chain(futures::stream::pending()))),
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(wire.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(value) = hyper::header::HeaderValue::from_str(wire.content_type) {
        response.headers_mut().insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

/// 32 bytes from the system's generator, as hex: a key, token or canary
/// never recorded, so it takes nothing from the run's determinism.
///
/// # Errors
/// When the generator cannot be read.
pub fn fresh_secret() -> std::io::Result<String> {
    let mut bytes = [0_u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(hex::encode(bytes))
}
