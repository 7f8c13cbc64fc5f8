//! Cost of one mediated tool call through the envelope and the reference
//! kernel, in process, measured per call inside an already open turn: the
//! runtime reads the monotonic clock right before `invoke_tool` and right
//! after its answer, and only those spans are summed. Turn set-up and
//! tear-down (executor construction, authority, admission, reach, listing,
//! the turn's result and `turn.ended`) are timed separately as
//! `mediated_call/turn_without_calls`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, Criterion};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_conformance::run::request::turn_request;
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::executor::Executor;
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions, SequentialIds};
use sharedos_envelope::runtime::{complete, RuntimePlugin};
use sharedos_grading::input::world::World;
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::tool::{ToolCall, ToolStatus};
use sharedos_port::signal::AbortSignal;
use sharedos_world::options::WorldOptions;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

// The CLI's allocator, as in the matrix benchmarks: a call allocates and
// frees a few dozen small values, so the allocator is part of its cost.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Most calls one turn makes (its step and call budgets are set to this).
const MAX_CALLS_PER_TURN: u32 = 256;

/// A runtime that issues the same tool call `calls` times, timing each call
/// on its own and keeping what each returned.
struct Repeater {
    tool: &'static str,
    arguments: Map<String, Value>,
    calls: Cell<u32>,
    spans: RefCell<Vec<Duration>>,
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
            for step in 0..self.calls.get() {
                // Building the call is the runtime's own work, not mediation.
                let call = ToolCall {
                    id: format!("{}.call-{step}", request.execution_id),
                    tool: self.tool.to_string(),
                    arguments: self.arguments.clone(),
                    trace_id: request.context.trace_id.clone(),
                    requested_at: request.context.now.clone(),
                };
                let start = Instant::now();
                let result = host.invoke_tool(call, ToolInvocationOptions::at_step(u64::from(step))).await?;
                self.spans.borrow_mut().push(start.elapsed());
                self.outcomes.borrow_mut().push((result.status(), result.error().map(|e| e.code.clone())));
            }
            Ok(complete(json!({ "calls": self.calls.get() })))
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
    WorldOptions {
        max_steps: Some(MAX_CALLS_PER_TURN),
        max_tool_calls: Some(MAX_CALLS_PER_TURN),
        ..WorldOptions::default()
    }
}

/// What one turn cost: the whole `execute`, and each call on its own.
struct TurnTiming {
    turn: Duration,
    spans: Vec<Duration>,
    outcomes: Vec<(ToolStatus, Option<String>)>,
}

/// Runs one turn of `calls` calls against a fresh world (built untimed).
async fn timed_turn(tool: &'static str, args: &Map<String, Value>, calls: u32, turn: u64) -> TurnTiming {
    let options = world_options();
    let world = World::build(&options).expect("the default world builds");
    let id = format!("bench.mediated.{turn}");
    let clock = world.fixtures.clock.clone();
    let executor_options = ExecutorOptions {
        clock: Rc::new(move || clock.now()),
        create_id: Rc::new(SequentialIds::new(&format!("{id}.event"))),
        ..ExecutorOptions::default()
    };
    let runtime = Rc::new(Repeater {
        tool,
        arguments: args.clone(),
        calls: Cell::new(calls),
        spans: RefCell::new(Vec::with_capacity(calls as usize)),
        outcomes: RefCell::new(Vec::with_capacity(calls as usize)),
    });
    let request = turn_request(&world, &options, &id, 1);
    let start = Instant::now();
    let executor = Executor::new(world.kernel.clone(), runtime.clone(), executor_options).expect("the executor builds");
    let result = executor.execute(request, ExecuteOptions::default()).await.expect("the turn executes");
    let turn = start.elapsed();
    drop(result);
    let spans = runtime.spans.take();
    let outcomes = runtime.outcomes.take();
    TurnTiming { turn, spans, outcomes }
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().expect("the runtime starts")
}

/// The `q`-quantile of `spans` (sorted in place).
fn quantile(spans: &mut [Duration], q: f64) -> Duration {
    spans.sort_unstable();
    // The index is within bounds and non-negative by construction.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
    let at = ((spans.len() - 1) as f64 * q).round() as usize;
    spans[at]
}

fn bench_call(c: &mut Criterion, name: &str, tool: &'static str, args: Value, expected: (ToolStatus, Option<&str>)) {
    let args = arguments(args);
    let runtime = paused_runtime();
    // Check once that every call ends the way the benchmark name says, and
    // print the distribution of single calls over a few full turns.
    let mut spans = Vec::new();
    for turn in 0..8 {
        let timing = runtime.block_on(timed_turn(tool, &args, MAX_CALLS_PER_TURN, turn));
        assert_eq!(timing.outcomes.len(), MAX_CALLS_PER_TURN as usize, "{name}: every call returned");
        for outcome in &timing.outcomes {
            assert_eq!((outcome.0, outcome.1.as_deref()), expected, "{name}: unexpected call outcome");
        }
        spans.extend(timing.spans);
    }
    let (p50, p90) = (quantile(&mut spans, 0.5), quantile(&mut spans, 0.9));
    eprintln!("{name}: single calls over {} calls: p50 {p50:?}, p90 {p90:?}", spans.len());
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let (mut left, mut turn) = (iters, 0);
            while left > 0 {
                let calls = u32::try_from(left.min(u64::from(MAX_CALLS_PER_TURN))).unwrap_or(MAX_CALLS_PER_TURN);
                let timing = runtime.block_on(timed_turn(tool, &args, calls, turn));
                total += timing.spans.iter().sum::<Duration>();
                left -= u64::from(calls);
                turn += 1;
            }
            total
        });
    });
}

fn bench_turn(c: &mut Criterion) {
    let runtime = paused_runtime();
    let args = Map::new();
    c.bench_function("mediated_call/turn_without_calls", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for turn in 0..iters {
                total += runtime.block_on(timed_turn("files.read", &args, 0, turn)).turn;
            }
            total
        });
    });
}

/// The allowed call: `files.read` of a seeded file.
fn allowed_read() -> (&'static str, Value) {
    ("files.read", json!({ "path": ["Workspace", "policy.md"] }))
}

/// The denied call: `files.replace` of the same file, which no grant allows.
fn denied_write() -> (&'static str, Value) {
    ("files.replace", json!({ "path": ["Workspace", "policy.md"], "content": "x" }))
}

fn mediated_call(c: &mut Criterion) {
    let (tool, args) = allowed_read();
    bench_call(c, "mediated_call/allowed_read", tool, args, (ToolStatus::Succeeded, None));
    let (tool, args) = denied_write();
    bench_call(c, "mediated_call/denied_write", tool, args, (ToolStatus::Denied, Some("no_matching_grant")));
    bench_turn(c);
}

criterion_group!(benches, mediated_call);

/// `PROFILE_TURNS=<turns>:<calls>` runs that many turns of `files.read`
/// calls (`<turns>:<calls>:denied`: of denied `files.replace` calls) and
/// exits, for an instruction-count profiler; otherwise criterion.
fn main() {
    if let Ok(spec) = std::env::var("PROFILE_TURNS") {
        let mut parts = spec.split(':');
        let (turns, calls) = (parts.next().unwrap_or_default(), parts.next().expect("PROFILE_TURNS=<turns>:<calls>"));
        let (tool, args) = if parts.next() == Some("denied") { denied_write() } else { allowed_read() };
        let args = arguments(args);
        let runtime = paused_runtime();
        for turn in 0..turns.parse::<u64>().expect("a turn count") {
            let timing = runtime.block_on(timed_turn(tool, &args, calls.parse().expect("a call count"), turn));
            std::hint::black_box(timing.turn);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
