//! The scripted model against peers that do not play by the rules: many
//! connections without the turn's key, each claiming a 16 MiB body and
//! trickling it, and a body over the limit sent with the key. The
//! timeouts here are watchdogs only: what is asserted is what the server
//! read and answered.

use sharedos_conformance_metadata::witness::{Answer, Exchange, WitnessLog};
use sharedos_scripted_model::admission::MAX_CONNECTIONS;
use sharedos_scripted_model::play::{Play, PlayEnding};
use sharedos_scripted_model::server::{ModelEndpoint, ModelServer, MAX_BODY_BYTES};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long anything here may take before the test is failed as hung.
const WATCHDOG: Duration = Duration::from_secs(30);

async fn start() -> (ModelServer, ModelEndpoint, Arc<Mutex<WitnessLog>>) {
    let log = Arc::new(Mutex::new(WitnessLog::default()));
    let play = Play { calls: Vec::new(), ending: PlayEnding::Complete { at_ms: None }, secrets: Vec::new() };
    let server = ModelServer::start(play, "sharedos", Arc::clone(&log)).await.unwrap();
    let endpoint = server.endpoint();
    (server, endpoint, log)
}

fn address(endpoint: &ModelEndpoint) -> String {
    endpoint.base_url.trim_start_matches("http://").to_string()
}

/// A connection that has sent a POST's head with `headers`.
async fn posted(endpoint: &ModelEndpoint, headers: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address(endpoint)).await.unwrap();
    let head = format!("POST /v1/messages HTTP/1.1\r\nhost: model\r\ncontent-type: application/json\r\n{headers}\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// The status code of the answer read from `stream`, failing the test if
/// none comes within the watchdog.
async fn status(stream: &mut TcpStream) -> u16 {
    let read = async {
        let mut line = Vec::new();
        let mut byte = [0_u8; 1];
        while !line.ends_with(b"\r\n") && matches!(stream.read(&mut byte).await, Ok(1)) {
            line.push(byte[0]);
        }
        line
    };
    let line = tokio::time::timeout(WATCHDOG, read).await.expect("no answer: the server waits for the body");
    let line = String::from_utf8(line).unwrap();
    line.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or_else(|| panic!("{line:?}"))
}

fn exchanges(log: &Mutex<WitnessLog>) -> Vec<Exchange> {
    log.lock().unwrap().exchanges.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_key_are_refused_on_their_heads_before_any_body_is_read() {
    let (server, endpoint, log) = start().await;
    let count = MAX_CONNECTIONS + 8;
    let mut connections = Vec::new();
    for _ in 0..count {
        // Each claims 16 MiB and sends 1 KiB of it, then holds the rest.
        let mut stream =
            posted(&endpoint, &format!("x-api-key: sk-not-the-key\r\ncontent-length: {MAX_BODY_BYTES}\r\n")).await;
        stream.write_all(&[b' '; 1024]).await.unwrap();
        connections.push(stream);
    }
    for stream in &mut connections {
        assert_eq!(status(stream).await, 401);
    }
    let (_, most) = server.connections();
    server.close().await;
    assert!(most <= MAX_CONNECTIONS, "{most} connections served at once");
    let refused = exchanges(&log);
    assert_eq!(refused.len(), count);
    for exchange in &refused {
        assert_eq!(exchange.answer, Answer::Unauthorized);
        assert_eq!((exchange.body_bytes, exchange.body_sha256.as_deref()), (0, None), "no byte of the body read");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_cap_wait_until_a_served_one_closes() {
    let (server, endpoint, log) = start().await;
    // Connections that send nothing hold every place.
    let mut idle = Vec::new();
    for _ in 0..MAX_CONNECTIONS + 8 {
        idle.push(TcpStream::connect(address(&endpoint)).await.unwrap());
    }
    let watchdog = tokio::time::Instant::now() + WATCHDOG;
    while server.connections().0 < MAX_CONNECTIONS {
        assert!(tokio::time::Instant::now() < watchdog, "never served {MAX_CONNECTIONS} at once");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // One with the key waits in the queue, unanswered, while they stay.
    let mut keyed = posted(&endpoint, &format!("x-api-key: {}\r\ncontent-length: 2\r\n", endpoint.key)).await;
    keyed.write_all(b"{}").await.unwrap();
    let answered = tokio::spawn(async move { status(&mut keyed).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!answered.is_finished(), "a connection past the cap was served");
    assert!(exchanges(&log).is_empty());
    assert_eq!(server.connections(), (MAX_CONNECTIONS, MAX_CONNECTIONS));
    drop(idle);
    assert_eq!(answered.await.unwrap(), 200);
    let (_, most) = server.connections();
    server.close().await;
    assert_eq!(most, MAX_CONNECTIONS, "never more than the cap at once");
    assert!(matches!(exchanges(&log)[..], [Exchange { answer: Answer::Side, .. }]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_declared_over_the_limit_is_413_before_any_of_it_is_read() {
    let (server, endpoint, log) = start().await;
    let declared = MAX_BODY_BYTES as u64 + 1;
    let mut stream = posted(&endpoint, &format!("x-api-key: {}\r\ncontent-length: {declared}\r\n", endpoint.key)).await;
    assert_eq!(status(&mut stream).await, 413);
    server.close().await;
    let exchange = exchanges(&log).remove(0);
    assert_eq!(exchange.answer, Answer::TooLarge { declared: Some(declared) });
    assert_eq!((exchange.body_bytes, exchange.body_sha256), (0, None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_over_the_limit_is_413_once_the_limit_is_passed_and_witnessed_so() {
    const CHUNK: usize = 64 * 1024;
    let (server, endpoint, log) = start().await;
    let stream = posted(&endpoint, &format!("x-api-key: {}\r\ntransfer-encoding: chunked\r\n", endpoint.key)).await;
    let (mut read, mut write) = stream.into_split();
    // Twice the limit is offered; the server stops taking it at the limit.
    let sending = tokio::spawn(async move {
        let chunk = [format!("{CHUNK:x}\r\n").into_bytes(), vec![b' '; CHUNK], b"\r\n".to_vec()].concat();
        for _ in 0..2 * MAX_BODY_BYTES / CHUNK {
            if write.write_all(&chunk).await.is_err() {
                break;
            }
        }
        write
    });
    let mut line = [0_u8; 12];
    tokio::time::timeout(WATCHDOG, read.read_exact(&mut line)).await.expect("no answer").unwrap();
    assert_eq!(String::from_utf8_lossy(&line), "HTTP/1.1 413");
    drop(tokio::time::timeout(WATCHDOG, sending).await.expect("the sender is stuck"));
    server.close().await;
    let exchange = exchanges(&log).remove(0);
    assert_eq!(exchange.answer, Answer::TooLarge { declared: None });
    let seen = exchange.body_bytes;
    assert!(seen > MAX_BODY_BYTES && seen <= MAX_BODY_BYTES + CHUNK, "read {seen} bytes: it must stop at the limit");
    assert!(exchange.body_sha256.is_some(), "the part read is hashed");
}
