//! Seating a stand-in runtime over the reference world and running one
//! turn the way the conformance runner does.

use sharedos_envelope::options::ExecuteOptions;
use sharedos_model::execution::{ExecutionOptions, ExecutionResult, RuntimeManifest, RuntimeTurnRequest};
use sharedos_process::launch::{Launch, SessionLimits};
use sharedos_process::runtime::{ProcessRuntime, ScriptFor};
use sharedos_process::seat::ProcessSeat;
use sharedos_testkit::world::World;
use std::rc::Rc;
use std::time::Duration;

/// The stand-in under `tests/standins` in `mode`, with short limits.
pub fn standin(mode: &str) -> Launch {
    let mut launch = Launch::new("python3");
    launch.args = vec![format!("{}/tests/standins/standin.py", env!("CARGO_MANIFEST_DIR")), mode.to_string()];
    launch.env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    launch.limits = SessionLimits {
        startup_timeout: Duration::from_secs(2),
        busy_timeout: Duration::from_millis(1500),
        max_line_bytes: 4096,
        max_ignored_lines: 10,
        stderr_tail_bytes: 1024,
        shutdown_grace: Duration::from_millis(200),
    };
    launch
}

/// The manifest recorded when a runtime never said `ready`.
pub fn fallback() -> RuntimeManifest {
    RuntimeManifest { id: "process:test".into(), version: "0".into(), protocol_version: "1".into(), metadata: None }
}

/// What one turn left behind.
pub struct Turn {
    pub result: ExecutionResult,
    /// Virtual milliseconds the turn took.
    pub elapsed_ms: u128,
    pub runtime: ProcessRuntime,
}

/// Runs one turn of `seat` over the baseline world, on a paused clock,
/// with a turn deadline of `timeout_ms`.
pub fn run_turn(seat: &Rc<ProcessSeat>, timeout_ms: u64) -> Turn {
    run_seated(seat, timeout_ms, None)
}

/// [`run_turn`] for a scripted seat, whose report the harness waits for.
pub fn run_scripted_turn(seat: &Rc<ProcessSeat>, timeout_ms: u64) -> Turn {
    run_seated(seat, timeout_ms, Some(Rc::new(|_: &RuntimeTurnRequest| serde_json::json!({"steps": []}))))
}

fn run_seated(seat: &Rc<ProcessSeat>, timeout_ms: u64, script: Option<ScriptFor>) -> Turn {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().enable_io().start_paused(true).build().unwrap();
    runtime.block_on(async {
        let world = World::baseline();
        seat.prepare().await;
        let process = ProcessRuntime::new(Rc::clone(seat), script);
        let executor = world.executor(Rc::new(process.clone()), 0);
        let options = ExecutionOptions { timeout_ms: Some(timeout_ms), ..ExecutionOptions::default() };
        let request = world.request(Some(options));
        let background = process.background();
        let started = tokio::time::Instant::now();
        let execution = executor.execute(request, ExecuteOptions::default());
        tokio::pin!(execution);
        let result = loop {
            tokio::select! {
                biased;
                result = &mut execution => break result.unwrap(),
                () = background.drive() => {}
            }
        };
        let elapsed_ms = started.elapsed().as_millis();
        process.finish().await;
        Turn { result, elapsed_ms, runtime: process }
    })
}

/// The code the turn's failure carries.
pub fn code(turn: &Turn) -> String {
    turn.result.error.as_ref().map(|e| e.code.clone()).unwrap_or_default()
}

/// `check` of every item, four at a time, each on a thread of its own
/// (a seat is not `Send`: each thread seats its own). Most of a violation's
/// turn is a wait for a real-time limit, which the others spend working.
pub fn each_in_parallel<I: Send, T: Send>(items: Vec<I>, check: impl Fn(I) -> T + Sync) -> Vec<T> {
    let queue = std::sync::Mutex::new(items.into_iter().enumerate().collect::<Vec<_>>());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let Some((index, item)) = queue.lock().unwrap().pop() else { return };
                let outcome = check(item);
                done.lock().unwrap().push((index, outcome));
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, outcome)| outcome).collect()
}
