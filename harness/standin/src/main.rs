//! `sharedos-standin`: a stand-in for a vendor CLI speaking JSON lines over
//! stdio.
//!
//! It replays a stream file on stdout. A line that is exactly `---` ends a
//! batch and is never written. The switches add the ways a live CLI can
//! misbehave, so the child-process transport is tested against a real
//! process rather than a simulation of one.
#![forbid(unsafe_code)]

mod replay;

use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// What the stand-in writes forever under `--flood`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Flood {
    /// Short lines that are not JSON.
    Lines,
    /// One line that never ends.
    Huge,
    /// Valid JSON objects the driver ignores.
    Frames,
}

/// The command line.
#[derive(Debug, Parser)]
#[command(name = "sharedos-standin", about = "Replays a JSON-lines stream as a stand-in vendor CLI.")]
pub struct Args {
    /// The stream to replay; `---` lines separate batches.
    pub stream: Option<PathBuf>,
    /// Before each batch, read one line from stdin (the opening frame, then
    /// one tool result per later batch); stop quietly when stdin ends.
    #[arg(long)]
    pub answer: bool,
    /// Write every stdin line read back on stdout, as
    /// `{"standin":"received","line":...}`.
    #[arg(long)]
    pub echo_stdin: bool,
    /// First write `{"standin":"env","env":{...}}` with the environment seen.
    #[arg(long)]
    pub print_env: bool,
    /// Start a copy of itself that hangs, in the same process group and
    /// sharing stdout, and write `{"standin":"grandchild","pid":N}`.
    #[arg(long)]
    pub spawn_grandchild: bool,
    /// Write this many bytes to stderr before replaying.
    #[arg(long, value_name = "BYTES")]
    pub stderr_flood: Option<u64>,
    /// Cut the stream's last line in half and write it without a newline.
    #[arg(long)]
    pub truncate_last: bool,
    /// After replaying, sleep forever.
    #[arg(long, conflicts_with_all = ["flood", "exit_mid_turn"])]
    pub hang: bool,
    /// After replaying, write forever.
    #[arg(long, value_enum, conflicts_with = "exit_mid_turn")]
    pub flood: Option<Flood>,
    /// After replaying, exit with status 3.
    #[arg(long)]
    pub exit_mid_turn: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match replay::run(&args) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("sharedos-standin: failed to {error}");
            ExitCode::from(2)
        }
    }
}
