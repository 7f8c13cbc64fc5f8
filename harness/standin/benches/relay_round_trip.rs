//! One MCP tool call's round trip through the stdio relay, as a CLI that
//! starts a stdio MCP server makes it: rmcp's client speaks to the relay
//! process on its stdin and stdout, and the relay carries the lines to the
//! turn's Unix socket. The relay here is the stand-in's `relay` mode, the
//! same code as `sharedos-conformance mcp-relay`. Only the calls are
//! timed, inside one real turn on a real clock.
//!
//! `cargo bench -p sharedos-standin --bench relay_round_trip` (figures in
//! `reports/bench.md`, beside the other transports).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use futures::future::LocalBoxFuture;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
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

/// Makes `calls` reads through the relay and keeps how long they took.
struct RelayedCalls {
    calls: u64,
    took: Rc<Cell<Duration>>,
}

impl McpHarness for RelayedCalls {
    fn id(&self) -> &str {
        "claude-code"
    }

    fn transport(&self) -> Transport {
        Transport::Stdio
    }

    fn run(&self, launch: HarnessLaunch) -> LocalBoxFuture<'_, HarnessExit> {
        Box::pin(async move {
            let Connection::Stdio { command, args } = launch.connection else { unreachable!("a stdio turn") };
            let mut relay = tokio::process::Command::new(command);
            relay.args(args);
            let client = ().serve(TokioChildProcess::new(relay).unwrap()).await.unwrap();
            client.list_all_tools().await.unwrap();
            let started = Instant::now();
            for _ in 0..self.calls {
                let params = CallToolRequestParams::new("files.read").with_arguments(read_policy());
                assert_eq!(client.call_tool(params).await.unwrap().is_error, Some(false));
            }
            self.took.set(started.elapsed());
            let _ = client.cancel().await;
            let done = r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#;
            HarnessExit::Exited { code: 0, stdout: vec![done.to_string()] }
        })
    }
}

/// The time `calls` calls took, in turns of at most 5 000 calls (a turn's
/// tool-call ceiling is 10 000).
fn calls_through_the_relay(calls: u64) -> Duration {
    (0..calls.div_ceil(5_000)).map(|turn| turn_of((calls - turn * 5_000).min(5_000))).sum()
}

fn turn_of(calls: u64) -> Duration {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let world = World::baseline();
        let took = Rc::new(Cell::new(Duration::ZERO));
        let relay = RelayCommand {
            program: env!("CARGO_BIN_EXE_sharedos-mcp-standin").to_string(),
            args: vec!["relay".to_string()],
        };
        let options = ServeOptions { relay: Some(relay), ..ServeOptions::default() };
        let ids = Rc::new(|_: &str, _: &serde_json::Map<String, serde_json::Value>| "call".to_string());
        let harness = RelayedCalls { calls, took: Rc::clone(&took) };
        let runtime = McpHarnessRuntime::new(Vendor::ClaudeCode, Rc::new(harness), ids).with_serve_options(options);
        let limits = ExecutionOptions { max_tool_calls: Some(10_000), max_steps: None, timeout_ms: None };
        let result = world
            .executor(Rc::new(runtime), 0)
            .execute(world.request(Some(limits)), ExecuteOptions::default())
            .await
            .unwrap();
        assert_eq!(result.status, sharedos_model::execution::ExecutionStatus::Succeeded, "{:?}", result.error);
        took.get()
    })
}

fn relay_round_trip(c: &mut Criterion) {
    c.bench_function("mcp_round_trip/stdio_relay", |b| b.iter_custom(calls_through_the_relay));
}

criterion_group!(benches, relay_round_trip);
criterion_main!(benches);
