//! Cost of one mediated tool call through the envelope and the reference
//! kernel, in process: a turn issues `CALLS_PER_TURN` identical calls and the
//! turn's time is divided by that count. World construction is left out of
//! the timed region; executor setup and the turn's result assembly are in it,
//! spread over the calls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_conformance::run::request::turn_request;
use sharedos_conformance::world::World;
use sharedos_conformance::world_options::WorldOptions;
use sharedos_envelope::executor::Executor;
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions, SequentialIds};
use sharedos_envelope::runtime::{complete, RuntimeFailure, RuntimePlugin};
use sharedos_kernel::signal::AbortSignal;
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::tool::{ToolCall, ToolStatus};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Calls issued per timed turn.
const CALLS_PER_TURN: u32 = 64;

/// A runtime that issues the same tool call `CALLS_PER_TURN` times and keeps
/// what each call returned, so the setup can check the calls did what the
/// benchmark claims.
struct Repeater {
    tool: &'static str,
    arguments: Map<String, Value>,
    outcomes: RefCell<Vec<(ToolStatus, Option<String>)>>,
}

impl RuntimePlugin for Repeater {
    fn manifest(&self) -> RuntimeManifest {
        RuntimeManifest {
            id: "bench.repeater".into(),
            version: "1".into(),
            protocol_version: PROTOCOL_VERSION.into(),
            metadata: None,
        }
    }

    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        _signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>> {
        Box::pin(async move {
            for step in 0..CALLS_PER_TURN {
                let call = ToolCall {
                    id: format!("{}.call-{step}", request.execution_id),
                    tool: self.tool.to_string(),
                    arguments: self.arguments.clone(),
                    trace_id: request.context.trace_id.clone(),
                    requested_at: request.context.now.clone(),
                };
                let result = host.invoke_tool(call, ToolInvocationOptions::at_step(u64::from(step))).await?;
                self.outcomes.borrow_mut().push((result.status(), result.error().map(|e| e.code.clone())));
            }
            Ok(complete(json!({ "calls": CALLS_PER_TURN })))
        })
    }
}

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn world_options() -> WorldOptions {
    WorldOptions { max_steps: Some(CALLS_PER_TURN), max_tool_calls: Some(CALLS_PER_TURN), ..WorldOptions::default() }
}

/// Runs one turn of `CALLS_PER_TURN` calls against a fresh world; returns the
/// time spent in the turn alone and what each call returned.
async fn timed_turn(
    tool: &'static str,
    args: &Map<String, Value>,
    turn: u64,
) -> (Duration, Vec<(ToolStatus, Option<String>)>) {
    let options = world_options();
    let world = World::build(&options).expect("the default world builds");
    let id = format!("bench.mediated.{turn}");
    let clock = world.fixtures.clock.clone();
    let executor_options = ExecutorOptions {
        clock: Rc::new(move || clock.now()),
        create_id: Rc::new(SequentialIds::new(&format!("{id}.event"))),
        ..ExecutorOptions::default()
    };
    let runtime = Rc::new(Repeater { tool, arguments: args.clone(), outcomes: RefCell::new(Vec::new()) });
    let request = turn_request(&world, &options, &id, 1);
    let start = Instant::now();
    let executor = Executor::new(world.kernel.clone(), runtime.clone(), executor_options).expect("the executor builds");
    let result = executor.execute(request, ExecuteOptions::default()).await.expect("the turn executes");
    let elapsed = start.elapsed();
    drop(result);
    let outcomes = runtime.outcomes.borrow().clone();
    (elapsed, outcomes)
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().expect("the runtime starts")
}

fn bench_call(c: &mut Criterion, name: &str, tool: &'static str, args: Value, expected: (ToolStatus, Option<&str>)) {
    let args = arguments(args);
    let runtime = paused_runtime();
    // Check once that every call ends the way the benchmark name says.
    let (_, outcomes) = runtime.block_on(timed_turn(tool, &args, 0));
    assert_eq!(outcomes.len(), CALLS_PER_TURN as usize, "{name}: every call returned");
    for outcome in &outcomes {
        assert_eq!((outcome.0, outcome.1.as_deref()), expected, "{name}: unexpected call outcome");
    }
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let (elapsed, _) = runtime.block_on(timed_turn(tool, &args, i));
                total += elapsed;
            }
            total / CALLS_PER_TURN
        });
    });
}

fn mediated_call(c: &mut Criterion) {
    let path = json!(["Workspace", "policy.md"]);
    bench_call(c, "mediated_call/allowed_read", "files.read", json!({ "path": path }), (ToolStatus::Succeeded, None));
    bench_call(
        c,
        "mediated_call/denied_write",
        "files.replace",
        json!({ "path": path, "content": "x" }),
        (ToolStatus::Denied, Some("no_matching_grant")),
    );
}

criterion_group!(benches, mediated_call);
criterion_main!(benches);
