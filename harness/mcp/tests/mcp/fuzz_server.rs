//! Any bytes a peer sends the turn's server: the HTTP gate reads every
//! body as one message or names its JSON-RPC error, and the server on MCP's
//! stdio framing answers or ignores every line and keeps serving. Damaged
//! MCP messages (a value replaced, a key removed, cut short, or bytes
//! instead) and raw bytes; `scripts/fuzz.sh` runs these at 100 000 cases.

use proptest::prelude::*;
use serde_json::{json, Value};
use sharedos_mcp::bridge::open_bridge;
use sharedos_mcp::catalog::PublishedCatalog;
use sharedos_mcp::http::one_message;
use sharedos_mcp::server::{McpToolServer, ServerIdentity};
use sharedos_mcp::stdio::serve_stream;
use sharedos_testkit::mutate::{damage, damaged};
use sharedos_testkit::world::World;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "jsonrpc", "2.0", "id", "method", "params", "initialize", "ping", "tools/list", "tools/call", "name",
    "arguments", "_meta", "sharedos/protocolVersion", "protocolVersion", "capabilities", "clientInfo", "cursor",
    "notifications/initialized", "notifications/cancelled", "requestId", "files.read", "sharedos.escalate",
];

const MESSAGES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"},"_meta":{"sharedos/protocolVersion":"2"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}"#,
    r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"files.read","arguments":{"path":["W"]},"_meta":{"sharedos/protocolVersion":"2"}}}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
];

/// The client's end of a served catalogue whose bridge is closed, so a
/// call is answered `-32603` at once rather than waited on.
struct Served {
    runtime: tokio::runtime::Runtime,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    pings: u64,
}

impl Served {
    fn new() -> Served {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let tools: Vec<_> = World::baseline().requested_tools.into_iter().map(Arc::new).collect();
        let catalog = Arc::new(PublishedCatalog::new("exec-1", &tools).unwrap());
        let (_, sender) = open_bridge();
        let identity = ServerIdentity { name: "sharedos".into(), version: "1".into(), instructions: None };
        let server = McpToolServer::new(catalog, sender, &identity);
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        runtime.spawn(serve_stream(server, server_end, tokio_util::sync::CancellationToken::new()));
        let (read, write) = tokio::io::split(client_end);
        let mut served = Served { runtime, lines: BufReader::new(read).lines(), write, pings: 0 };
        served.send(MESSAGES[0].as_bytes());
        served.send(MESSAGES[1].as_bytes());
        served
    }

    fn send(&mut self, line: &[u8]) {
        let mut bytes: Vec<u8> = line.iter().copied().filter(|b| *b != b'\n').collect();
        bytes.push(b'\n');
        self.runtime.block_on(self.write.write_all(&bytes)).unwrap();
    }

    /// Sends a ping and reads until its answer: the server is still serving.
    fn still_serving(&mut self) -> bool {
        self.pings += 1;
        let id = format!("ping-{}", self.pings);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string().as_bytes());
        let lines = &mut self.lines;
        self.runtime.block_on(async {
            loop {
                let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await else {
                    return false;
                };
                if serde_json::from_str::<Value>(&line).is_ok_and(|answer| answer["id"] == json!(id)) {
                    return true;
                }
            }
        })
    }
}

thread_local! {
    static SERVED: std::cell::RefCell<Option<Served>> = const { std::cell::RefCell::new(None) };
}

proptest! {
    #[test]
    fn the_http_gate_never_panics_and_names_a_json_rpc_error(which in any::<usize>(), damage in damage(WORDS)) {
        let body = damaged(MESSAGES[which % MESSAGES.len()], &damage);
        if let Err(unreadable) = one_message(&body) {
            prop_assert!(matches!(unreadable.code, -32700 | -32600));
        }
    }

    #[test]
    fn the_stdio_server_never_panics_and_keeps_serving(which in any::<usize>(), damage in damage(WORDS)) {
        let line = damaged(MESSAGES[which % MESSAGES.len()], &damage);
        let serving = SERVED.with(|served| {
            let mut served = served.borrow_mut();
            let served = served.get_or_insert_with(Served::new);
            served.send(&line);
            served.still_serving()
        });
        prop_assert!(serving, "the server stopped answering after {:?}", String::from_utf8_lossy(&line));
    }
}

#[test]
fn every_base_message_is_one_message() {
    for message in MESSAGES {
        assert_eq!(one_message(message.as_bytes()), Ok(()), "{message}");
    }
    assert_eq!(MESSAGES.len(), 6);
}
