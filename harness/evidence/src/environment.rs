//! Where a certification ran: recorded in its statement, never graded.

use serde::{Deserialize, Serialize};

/// The rustc that built this binary (set by the build script).
const RUSTC: &str = env!("SHAREDOS_EVIDENCE_RUSTC");

/// The machine and toolchain of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Environment {
    /// `std::env::consts::OS`.
    pub os: String,
    /// `std::env::consts::ARCH`.
    pub arch: String,
    /// The CPU's model name, where the system says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Logical CPUs available.
    pub cpus: usize,
    /// `rustc -V` of the build.
    pub toolchain: String,
}

impl Environment {
    /// This machine.
    #[must_use]
    pub fn current() -> Environment {
        Environment {
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cpu: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(1, usize::from),
            toolchain: RUSTC.to_string(),
        }
    }
}

/// The first `model name` of `/proc/cpuinfo` (Linux only).
fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}
