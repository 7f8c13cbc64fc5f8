//! What the stand-in's process tests share: how the stand-in is launched,
//! with which limits, and where its stream files are.
#![allow(dead_code)]

use sharedos_drivers::child_process::{Launch, ProcessLimits};
use std::time::Duration;

/// Generous: only there so a broken transport fails instead of hanging.
pub const HANG_GUARD: Duration = Duration::from_secs(20);

/// The path of a stream file under `tests/streams`.
pub fn stream(name: &str) -> String {
    format!("{}/tests/streams/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Limits short enough for a test, long enough for a loaded machine.
pub fn limits() -> ProcessLimits {
    ProcessLimits {
        deadline: Some(Duration::from_secs(15)),
        kill_grace: Duration::from_millis(200),
        exit_drain: Duration::from_millis(200),
        ..ProcessLimits::default()
    }
}

/// The stand-in CLI with `args`, under [`limits`].
pub fn standin(args: &[&str]) -> Launch {
    Launch::new(env!("CARGO_BIN_EXE_sharedos-standin")).args(args.iter().copied()).limits(limits())
}
