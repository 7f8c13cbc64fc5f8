//! The harness-side cost of one mediated call over `sharedos-runtime/2`,
//! and of ending a turn with the runtime.
//!
//! The stand-in runtime makes `files.read` calls one after another and
//! reports how long it was busy itself. A turn's time, minus that, is
//! measured for turns of 20 and of 220 calls; the difference over the 200
//! extra calls is the cost of one call, without what a turn costs once
//! (its start, its records, its end).
//!
//! What remains includes the operating system's round trip between the two
//! processes, which no harness avoids. The floor measures it: the same
//! stand-in answered by the least a peer can do (one thread reading two
//! lines and writing a fixed answer), so the harness's own cost is the
//! difference. Both share one CPU with their runtime, as a turn on virtual
//! time does (`sharedos_process::placement`).
//!
//! The harness's CPU time per call is measured the same way, from the
//! time the kernel counts for each of the harness's threads
//! (`/proc/self/task/*/schedstat`): it is what the harness spends, where
//! the time beyond the runtime's also holds the waits for the scheduler on
//! a busy machine.
//!
//! Ending a turn (`ProcessRuntime::finish`: `closed`, and since
//! `sharedos-runtime/2` the fence and its echo) is timed on its own, per
//! turn, wall and the harness's CPU: the fence's cost is the difference
//! from a build without it.
//!
//! `cargo bench -p sharedos-process --bench protocol_call` (figures in
//! `reports/bench.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sharedos_envelope::options::ExecuteOptions;
use sharedos_model::execution::{ExecutionOptions, RuntimeManifest};
use sharedos_process::launch::Launch;
use sharedos_process::placement::ThreadPin;
use sharedos_process::runtime::ProcessRuntime;
use sharedos_process::seat::ProcessSeat;
use sharedos_testkit::world::World;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::time::Instant;

const TURNS: usize = 20;
const SHORT: u32 = 20;
const LONG: u32 = 220;

fn standin_path() -> String {
    format!("{}/tests/standins/standin.py", env!("CARGO_MANIFEST_DIR"))
}

/// Nanoseconds of CPU time every thread of this process has had so far.
fn cpu_nanos() -> u128 {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u128>().ok())
        .sum()
}

/// What one turn through the harness took.
struct TurnTimes {
    /// Nanoseconds beyond the runtime's own time, until the turn's result.
    wall: u128,
    /// The harness's CPU nanoseconds, until the turn's result.
    cpu: u128,
    /// Nanoseconds of wall time ending the turn with the runtime.
    finish_wall: u128,
    /// The harness's CPU nanoseconds ending it.
    finish_cpu: u128,
}

/// One turn of calls through the harness.
fn harness_turn(seat: &Rc<ProcessSeat>) -> TurnTimes {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().enable_io().start_paused(true).build().unwrap();
    runtime.block_on(async {
        let world = World::baseline();
        seat.prepare().await;
        let process = ProcessRuntime::new(Rc::clone(seat), None);
        let executor = world.executor(Rc::new(process.clone()), 0);
        let options = ExecutionOptions { max_tool_calls: Some(1000), ..ExecutionOptions::default() };
        let request = world.request(Some(options));
        let background = process.background();
        let cpu = cpu_nanos();
        let started = Instant::now();
        let execution = executor.execute(request, ExecuteOptions::default());
        tokio::pin!(execution);
        let result = loop {
            tokio::select! {
                biased;
                result = &mut execution => break result.unwrap(),
                () = background.drive() => {}
            }
        };
        let wall = started.elapsed().as_nanos();
        let cpu = cpu_nanos() - cpu;
        let (finish_cpu, finishing) = (cpu_nanos(), Instant::now());
        process.finish().await;
        let (finish_wall, finish_cpu) = (finishing.elapsed().as_nanos(), cpu_nanos() - finish_cpu);
        let busy = result.output.as_ref().and_then(|o| o["busyNs"].as_u64()).expect("the stand-in timed itself");
        TurnTimes { wall: wall.saturating_sub(u128::from(busy)), cpu, finish_wall, finish_cpu }
    })
}

fn harness_seat(calls: u32) -> Rc<ProcessSeat> {
    let mut launch = Launch::new("python3");
    launch.args = vec![standin_path(), "calls".into(), calls.to_string()];
    launch.env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let fallback =
        RuntimeManifest { id: "bench".into(), version: "0".into(), protocol_version: "1".into(), metadata: None };
    Rc::new(ProcessSeat::new(launch, fallback))
}

/// The same for a turn answered by a bare peer.
fn floor_turn(calls: u32) -> u128 {
    // Placed as the harness places a turn on virtual time: the peer inherits
    // this thread's one CPU.
    let _pin = ThreadPin::here();
    let mut child = Command::new("python3")
        .args([standin_path(), "calls".into(), calls.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut say = |text: &str| {
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    say("{\"type\":\"hello\",\"protocol\":\"sharedos-runtime/2\"}\n");
    stdout.read_line(&mut line).unwrap();
    say("{\"type\":\"turn\",\"turn\":\"t\",\"request\":{\"context\":{\"traceId\":\"trace\",\"now\":\"2026-01-01T00:00:00Z\"}}}\n");
    let answer = "{\"type\":\"toolResult\",\"turn\":\"t\",\"id\":\"c\",\"result\":{\"status\":\"ok\",\"output\":{\"content\":\"# Policy\\nRead before you write.\\n\"}}}\n";
    let started = Instant::now();
    for _ in 0..calls {
        line.clear();
        stdout.read_line(&mut line).unwrap();
        stdout.read_line(&mut line).unwrap();
        say(answer);
    }
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let wall = started.elapsed().as_nanos();
    drop(stdin);
    child.wait().unwrap();
    let outcome: serde_json::Value = serde_json::from_str(&line).unwrap();
    let busy = outcome["outcome"]["output"]["busyNs"].as_u64().unwrap();
    wall.saturating_sub(u128::from(busy))
}

fn main() {
    let (short, long) = (harness_seat(SHORT), harness_seat(LONG));
    let (mut walls, mut cpus, mut finishes, mut finish_cpus) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..TURNS {
        let (short, long) = (harness_turn(&short), harness_turn(&long));
        walls.push((short.wall, long.wall));
        cpus.push((short.cpu, long.cpu));
        finishes.extend([short.finish_wall, long.finish_wall]);
        finish_cpus.extend([short.finish_cpu, long.finish_cpu]);
    }
    let floors: Vec<(u128, u128)> = (0..TURNS).map(|_| (floor_turn(SHORT), floor_turn(LONG))).collect();
    let (harness, bare, cpu) = (per_call(walls), per_call(floors), per_call(cpus));
    println!("protocol_call: per call, medians of {TURNS} turns of {SHORT} and of {LONG} calls");
    println!("  beyond the runtime's own time, through the harness: {harness:.1} µs");
    println!("  beyond the runtime's own time, through a bare peer (the floor): {bare:.1} µs");
    println!("  the harness's CPU time: {cpu:.1} µs");
    println!(
        "protocol_call: per turn, ending it with the runtime (closed, the fence and its echo), medians of {}",
        finishes.len()
    );
    println!("  wall: {:.1} µs", median(finishes) / 1000.0);
    println!("  the harness's CPU time: {:.1} µs", median(finish_cpus) / 1000.0);
}

/// The median of some nanoseconds.
#[allow(clippy::cast_precision_loss)]
fn median(mut nanos: Vec<u128>) -> f64 {
    nanos.sort_unstable();
    nanos[nanos.len() / 2] as f64
}

/// Microseconds per call: the median long turn less the median short one,
/// over the calls between them.
fn per_call(turns: Vec<(u128, u128)>) -> f64 {
    let (shorts, longs): (Vec<u128>, Vec<u128>) = turns.into_iter().unzip();
    (median(longs) - median(shorts)) / f64::from(LONG - SHORT) / 1000.0
}
