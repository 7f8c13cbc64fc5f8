//! One MCP tool call's round trip, as a harness sees it: rmcp's client
//! sends `tools/call` for `files.read`, the server hands it through the
//! bridge and the latch to the envelope and the reference kernel, and the
//! answer comes back. Measured over streamable HTTP on loopback (with a
//! bearer token), over the Unix socket a stdio relay connects to (MCP's
//! stdio framing), and in memory, each inside a real turn on a real clock;
//! only the calls are timed, not the connection or the listing.
//!
//! `cargo bench -p sharedos-mcp --bench round_trip` (figures in
//! `reports/bench.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use futures::future::LocalBoxFuture;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use sharedos_drivers::vendor::Vendor;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_mcp::harness::{Connection, HarnessExit, HarnessLaunch, McpHarness, Transport};
use sharedos_mcp::runtime::McpHarnessRuntime;
use sharedos_mcp::serve::{RelayCommand, ServeOptions};
use sharedos_model::execution::ExecutionOptions;
use sharedos_testkit::world::{read_policy, World};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Makes `calls` reads and keeps how long they took.
struct TimedCalls {
    transport: Transport,
    /// Over HTTP, one pooled connection rather than rmcp's default client,
    /// which opens a connection per request.
    pooled: bool,
    calls: u64,
    took: Rc<Cell<Duration>>,
}

impl McpHarness for TimedCalls {
    fn id(&self) -> &str {
        "claude-code"
    }

    fn transport(&self) -> Transport {
        self.transport
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        Box::pin(async move {
            let client = match launch.connection {
                Connection::InMemory(stream) => ().serve(stream).await.unwrap(),
                Connection::Http { url, token } => {
                    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token.unwrap());
                    let transport = if self.pooled {
                        StreamableHttpClientTransport::with_client(reqwest::Client::new(), config)
                    } else {
                        StreamableHttpClientTransport::from_config(config)
                    };
                    ().serve(transport).await.unwrap()
                }
                Connection::Stdio { args, .. } => {
                    ().serve(tokio::net::UnixStream::connect(args.last().unwrap()).await.unwrap()).await.unwrap()
                }
            };
            client.list_all_tools().await.unwrap();
            let started = Instant::now();
            for _ in 0..self.calls {
                let params = CallToolRequestParams::new("files.read").with_arguments(read_policy());
                let answer = client.call_tool(params).await.unwrap();
                assert_eq!(answer.is_error, Some(false));
            }
            self.took.set(started.elapsed());
            let _ = client.cancel().await;
            let done = r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#;
            HarnessExit::Exited { code: 0, stdout: vec![done.to_string()] }
        })
    }
}

/// The most calls one turn takes (its tool-call ceiling is 10 000).
const CALLS_PER_TURN: u64 = 5_000;

/// The time `calls` calls took over `transport`, in as few turns as take them.
fn calls_over((transport, pooled): (Transport, bool), calls: u64) -> Duration {
    let turns = calls.div_ceil(CALLS_PER_TURN);
    (0..turns).map(|turn| turn_of(transport, pooled, (calls - turn * CALLS_PER_TURN).min(CALLS_PER_TURN))).sum()
}

/// The time `calls` calls took over `transport`, inside one turn.
fn turn_of(transport: Transport, pooled: bool, calls: u64) -> Duration {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let world = World::baseline();
        let took = Rc::new(Cell::new(Duration::ZERO));
        let harness = TimedCalls { transport, pooled, calls, took: Rc::clone(&took) };
        let relay = RelayCommand { program: "unused".into(), args: Vec::new() };
        let options = ServeOptions { token: true, relay: Some(relay), workspace_root: None };
        let ids = Rc::new(|_: &str, _: &serde_json::Map<String, serde_json::Value>| "call".to_string());
        let runtime = McpHarnessRuntime::new(Vendor::ClaudeCode, Rc::new(harness), ids).with_serve_options(options);
        let limits = ExecutionOptions { max_tool_calls: Some(10_000), max_steps: None, timeout_ms: None };
        let request = world.request(Some(limits));
        let result = world.executor(Rc::new(runtime), 0).execute(request, ExecuteOptions::default()).await.unwrap();
        assert_eq!(result.status, sharedos_model::execution::ExecutionStatus::Succeeded, "{:?}", result.error);
        took.get()
    })
}

fn round_trip(c: &mut Criterion) {
    let mut group = c.benchmark_group("mcp_round_trip");
    let transports = [
        ("http_loopback", (Transport::Http, false)),
        ("http_loopback_pooled", (Transport::Http, true)),
        ("stdio_socket", (Transport::Stdio, false)),
        ("in_memory", (Transport::InMemory, false)),
    ];
    for (name, transport) in transports {
        group.bench_function(name, |b| b.iter_custom(|iters| calls_over(transport, iters)));
    }
    group.finish();
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
