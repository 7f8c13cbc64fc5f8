//! The server alone, spoken to line by line as MCP's stdio framing carries
//! it: JSON-RPC errors and negotiation (D52), and a closed bridge (D44).

use serde_json::{json, Value};
use sharedos_mcp::bridge::{open_bridge, Bridge};
use sharedos_mcp::catalog::PublishedCatalog;
use sharedos_mcp::server::{McpToolServer, ServerIdentity};
use sharedos_mcp::stdio::serve_stream;
use sharedos_testkit::world::World;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;

/// A raw connection to a served catalogue.
struct Raw {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    _bridge: Option<Bridge>,
}

fn serve(keep_bridge: bool) -> Raw {
    let tools: Vec<_> = World::baseline().requested_tools.into_iter().map(Arc::new).collect();
    let catalog = Arc::new(PublishedCatalog::new("exec-1", &tools).unwrap());
    let (bridge, sender) = open_bridge();
    let identity = ServerIdentity { name: "sharedos".into(), version: "1".into(), instructions: None };
    let server = McpToolServer::new(catalog, sender, &identity);
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve_stream(server, server_end, CancellationToken::new()));
    let (read, write) = tokio::io::split(client_end);
    Raw { lines: BufReader::new(read).lines(), write, _bridge: keep_bridge.then_some(bridge) }
}

impl Raw {
    async fn send(&mut self, message: Value) {
        self.write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    async fn answer(&mut self, message: Value) -> Value {
        self.send(message).await;
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line()).await;
        serde_json::from_str(&line.expect("an answer in time").unwrap().expect("a line")).unwrap()
    }

    async fn initialize(&mut self, version: &str) -> Value {
        let asked = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let answer = self.answer(asked).await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        answer
    }
}

#[tokio::test]
async fn d52_initialize_keeps_a_supported_revision_and_settles_on_the_newest_otherwise() {
    for (asked, agreed) in [("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"), ("2099-01-01", "2025-06-18")] {
        let mut raw = serve(true);
        let answer = raw.initialize(asked).await;
        assert_eq!(answer["result"]["protocolVersion"], json!(agreed), "asked {asked}");
    }
}

#[tokio::test]
async fn d52_an_unknown_method_and_a_call_without_a_name_are_json_rpc_errors_and_a_notification_gets_none() {
    let mut raw = serve(true);
    raw.initialize("2025-06-18").await;
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})).await;
    let unknown = raw.answer(json!({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"})).await;
    assert_eq!(unknown["id"], json!(1), "the notification before it got no answer");
    assert_eq!(unknown["error"]["code"], json!(-32601));
    let nameless = raw.answer(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}})).await;
    assert_eq!(nameless["error"]["code"], json!(-32602));
    let ping = raw.answer(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    assert_eq!(ping["result"], json!({}));
}

#[tokio::test]
async fn d52_json_that_is_no_message_is_answered_32600_under_its_id_or_under_id_null() {
    let mut raw = serve(true);
    raw.initialize("2025-06-18").await;
    for (line, id) in [
        (r#"{"foo":"bar"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":{},"nonsense":true}"#, Value::Null),
        ("[]", Value::Null),
        ("7", Value::Null),
        (r#"{"jsonrpc":"2.0","id":"a","nonsense":true}"#, json!("a")),
        (r#"{"jsonrpc":"2.0","id":5,"nonsense":1}"#, json!(5)),
    ] {
        raw.write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        let answer = raw.answer(json!({"jsonrpc": "2.0", "id": "after", "method": "ping"})).await;
        assert_eq!(answer["error"]["code"], json!(-32600), "{line}: {answer}");
        // JSON-RPC 2.0 §5: `id` is required on a response, and null when
        // the request's id could not be read.
        assert_eq!(answer.get("id"), Some(&id), "{line}: {answer}");
        let ping = tokio::time::timeout(Duration::from_secs(10), raw.lines.next_line()).await;
        let ping: Value = serde_json::from_str(&ping.unwrap().unwrap().unwrap()).unwrap();
        assert_eq!(ping["id"], json!("after"), "the server still serves after {line}");
    }
}

#[tokio::test]
async fn d44_a_call_reaching_a_closed_bridge_is_refused_32603() {
    let mut raw = serve(false);
    raw.initialize("2025-06-18").await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "files.read", "arguments": {}}});
    let refused = raw.answer(call).await;
    assert_eq!(refused["error"]["code"], json!(-32603));
}

/// The `-32602` answer of a request pinned to another epoch.
fn assert_refused_for_its_epoch(answer: &Value) {
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert_eq!(answer["error"]["data"], json!({"code": "unsupported_protocol_version", "supportedVersion": "2"}));
}

#[tokio::test]
async fn d53_initialize_pinned_to_another_epoch_is_refused_and_an_unpinned_one_is_told_epoch_2() {
    for pinned in [json!("1"), json!("3"), json!(2)] {
        let mut raw = serve(true);
        let asked = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "_meta": {"sharedos/protocolVersion": pinned},
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        assert_refused_for_its_epoch(&raw.answer(asked).await);
    }
    let mut raw = serve(true);
    let answer = raw.initialize("2025-06-18").await;
    assert_eq!(answer["result"]["_meta"], json!({"sharedos/protocolVersion": "2"}));
}

#[tokio::test]
async fn d53_a_call_pinned_to_another_epoch_is_refused_before_anything_is_invoked() {
    // Nobody serves this bridge: a call that reached it would never be
    // answered, so an answer at all shows the invoker was not called.
    let mut raw = serve(true);
    raw.initialize("2025-06-18").await;
    let pinned = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "files.read", "arguments": {}, "_meta": {"sharedos/protocolVersion": "1"}}});
    assert_refused_for_its_epoch(&raw.answer(pinned).await);
    let listed = raw.answer(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(listed["result"]["_meta"]["sharedos/protocolVersion"], json!("2"));
}
