//! Floods one scripted model with unauthenticated requests, each claiming
//! and sending a 16 MiB body, and prints the process's peak resident
//! memory (`VmHWM`) before and after: what a local process that cannot
//! know the turn's key costs the harness.
//!
//! `cargo run -p sharedos-scripted-model --example flood -- [CONNECTIONS]`
//! (24 by default).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sharedos_conformance_metadata::witness::WitnessLog;
use sharedos_scripted_model::play::{Play, PlayEnding};
use sharedos_scripted_model::server::ModelServer;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const BODY_BYTES: usize = 16 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;

/// The process's peak resident set, in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// One unauthenticated request: its headers, then its body in chunks for
/// as long as the server takes them; the status line it got back.
async fn flood_one(address: String) -> String {
    let mut stream = TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: {address}\r\nx-api-key: sk-not-the-key\r\n\
         content-type: application/json\r\ncontent-length: {BODY_BYTES}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let sending = tokio::spawn(async move {
        let chunk = vec![b' '; CHUNK];
        let mut sent = 0;
        while sent < BODY_BYTES {
            if write.write_all(&chunk).await.is_err() {
                break;
            }
            sent += CHUNK;
        }
        // Held open: a half-closed connection ends hyper's wait for an
        // answer before it is written.
        std::future::pending::<()>().await;
        drop(write);
    });
    // The status line is all that is wanted: the connection may be kept
    // open after the answer.
    let mut answer = Vec::new();
    let mut byte = [0_u8; 1];
    while !answer.ends_with(b"\r\n") && matches!(read.read(&mut byte).await, Ok(1)) {
        answer.push(byte[0]);
    }
    sending.abort();
    let line = String::from_utf8_lossy(&answer).trim().to_string();
    if line.is_empty() {
        "(no answer)".to_string()
    } else {
        line
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let connections: usize = std::env::args().nth(1).map_or(24, |n| n.parse().unwrap());
    let log = Arc::new(Mutex::new(WitnessLog::default()));
    let play = Play { calls: Vec::new(), ending: PlayEnding::Complete { at_ms: None }, secrets: Vec::new() };
    let server = ModelServer::start(play, "sharedos", Arc::clone(&log)).await.unwrap();
    let address = server.endpoint().base_url.trim_start_matches("http://").to_string();
    let before = peak_kib();
    let floods: Vec<_> = (0..connections).map(|_| tokio::spawn(flood_one(address.clone()))).collect();
    let mut answers = std::collections::BTreeMap::<String, usize>::new();
    for flood in floods {
        *answers.entry(flood.await.unwrap()).or_default() += 1;
    }
    let after = peak_kib();
    server.close().await;
    println!("connections: {connections}, each claiming {BODY_BYTES} bytes");
    for (answer, count) in &answers {
        println!("answered {count} x {answer}");
    }
    println!("peak RSS before the flood: {before} KiB; after: {after} KiB");
}
