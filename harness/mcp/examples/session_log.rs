//! Prints the wire of one MCP turn over streamable HTTP, as a CLI would
//! speak it: `initialize`, `tools/list`, an allowed call, a refused call,
//! the ask to escalate and a call after it. The session log in
//! `docs/vendors/seat-a-vendor-cli.md` is this program's output
//! (`cargo run -p sharedos-mcp --example session_log`); long values are
//! shortened so the log stays readable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::future::LocalBoxFuture;
use serde_json::{json, Value};
use sharedos_drivers::vendor::Vendor;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_mcp::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness, Transport};
use sharedos_mcp::runtime::McpHarnessRuntime;
use sharedos_mcp::serve::ServeOptions;
use sharedos_testkit::world::{read_policy, World};
use std::rc::Rc;

struct Logged;

/// A value with long strings cut and the catalogue's tools named only.
fn shortened(mut value: Value) -> Value {
    if let Some(tools) = value.pointer_mut("/result/tools") {
        let names: Vec<Value> = tools.as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
        *tools = json!(format!(
            "[{} tools: {}]",
            names.len(),
            names.iter().map(|n| n.as_str().unwrap()).collect::<Vec<_>>().join(", ")
        ));
    }
    cut(&mut value);
    value
}

fn cut(value: &mut Value) {
    match value {
        Value::String(text) if text.chars().count() > 72 => {
            *text = format!("{}…", text.chars().take(72).collect::<String>());
        }
        Value::Array(items) => items.iter_mut().for_each(cut),
        Value::Object(members) => members.values_mut().for_each(cut),
        _ => {}
    }
}

async fn exchange(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> Option<String> {
    println!("→ POST /mcp {body}");
    let mut request = client
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-06-18");
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_string());
    let text = response.text().await.unwrap();
    // A session's answers come as server-sent events: the message is the
    // JSON of a `data:` line.
    let answer = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok());
    match answer.or_else(|| serde_json::from_str(&text).ok()) {
        Some(answer) => println!("← {status} {}", shortened(answer)),
        None => println!("← {status}"),
    }
    session
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

impl McpHarness for Logged {
    fn id(&self) -> &str {
        "claude-code"
    }

    fn transport(&self) -> Transport {
        Transport::Http
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        Box::pin(async move {
            let Connection::Http { url, token } = launch.connection else { unreachable!("an HTTP turn") };
            let token = token.unwrap();
            let client = reqwest::Client::new();
            let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "a-cli", "version": "1"}}});
            let session = exchange(&client, &url, &token, None, initialize).await;
            let session = session.as_deref();
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            exchange(&client, &url, &token, session, initialized).await;
            exchange(&client, &url, &token, session, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
            let read = Value::Object(read_policy());
            exchange(&client, &url, &token, session, call(2, "files.read", read.clone())).await;
            exchange(&client, &url, &token, session, call(3, "files.delete", read.clone())).await;
            exchange(&client, &url, &token, session, call(4, "sharedos.escalate", json!({"reason": "needs a human"})))
                .await;
            exchange(&client, &url, &token, session, call(5, "files.read", read)).await;
            let done = r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#;
            HarnessExit::Exited { code: 0, stdout: vec![done.to_string()] }
        })
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let world = World::baseline();
        let ids = Rc::new(|_: &str, _: &serde_json::Map<String, Value>| "call".to_string());
        let options = ServeOptions { token: true, ..ServeOptions::default() };
        let seated = McpHarnessRuntime::new(Vendor::ClaudeCode, Rc::new(Logged), ids).with_serve_options(options);
        let result = world.executor(Rc::new(seated), 0).execute(world.request(None), ExecuteOptions::default()).await;
        let result = result.unwrap();
        let metadata = result.metadata.unwrap_or_default();
        println!("turn: {} ({} calls after the ask)", result.status.as_str(), metadata["callsAfterEscalation"]);
    });
}
