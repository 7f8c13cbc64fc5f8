//! The harness-side cost of one mediated call over `sharedos-runtime/1`:
//! turns of 200 `files.read` calls made by the stand-in runtime, timed
//! whole, minus the time the runtime reports it spent busy itself.
//!
//! `cargo bench -p sharedos-process --bench protocol_call` (figures in
//! `reports/bench.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sharedos_envelope::options::ExecuteOptions;
use sharedos_model::execution::{ExecutionOptions, RuntimeManifest};
use sharedos_process::launch::Launch;
use sharedos_process::runtime::ProcessRuntime;
use sharedos_process::seat::ProcessSeat;
use sharedos_testkit::world::World;
use std::rc::Rc;
use std::time::Instant;

const TURNS: usize = 20;
const CALLS: u128 = 200;

fn main() {
    let mut launch = Launch::new("python3");
    launch.args = vec![format!("{}/tests/standins/standin.py", env!("CARGO_MANIFEST_DIR")), "calls".into()];
    launch.env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let fallback =
        RuntimeManifest { id: "bench".into(), version: "0".into(), protocol_version: "1".into(), metadata: None };
    let seat = Rc::new(ProcessSeat::new(launch, fallback));
    let mut per_call = Vec::new();
    for _ in 0..TURNS {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        let (wall, busy) = runtime.block_on(async {
            let world = World::baseline();
            seat.prepare().await;
            let process = ProcessRuntime::new(Rc::clone(&seat), None);
            let executor = world.executor(Rc::new(process.clone()), 0);
            let options = ExecutionOptions { max_tool_calls: Some(1000), ..ExecutionOptions::default() };
            let request = world.request(Some(options));
            let background = process.background();
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
            process.finish().await;
            let busy = result.output.as_ref().and_then(|o| o["busyNs"].as_u64()).expect("the stand-in timed itself");
            (wall, u128::from(busy))
        });
        per_call.push(wall.saturating_sub(busy) / CALLS);
    }
    per_call.sort_unstable();
    let median = per_call[per_call.len() / 2];
    println!(
        "protocol_call: harness-side cost per mediated call over the protocol, median of {TURNS} turns of {CALLS} calls: {:.1} µs (min {:.1}, max {:.1})",
        median as f64 / 1000.0,
        per_call[0] as f64 / 1000.0,
        per_call[per_call.len() - 1] as f64 / 1000.0
    );
}
