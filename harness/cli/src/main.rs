#![forbid(unsafe_code)]
//! `sharedos-conformance`: run, check and bless the conformance matrix.

/// `println!` that never panics: a closed or full stdout (`| head`) ends
/// the printing, not the run, so reports and the JUnit file are still
/// written and the exit code still says how the run went. Control
/// characters are escaped ([`printable`](sharedos_grading::output::printable::printable)).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stdout().lock(), "{}", sharedos_grading::output::printable::printable(&text));
    }};
}

/// `eprintln!` with control characters escaped, as [`say!`] prints.
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = format!($($arg)*);
        let _ = writeln!(std::io::stderr().lock(), "{}", sharedos_grading::output::printable::printable(&text));
    }};
}

mod args;
mod baseline;
mod commands;
mod decode;
#[cfg(test)]
mod docs;
#[cfg(test)]
mod docs_threats;
mod evidence;
use sharedos_conformance_metadata::exit;
mod interrupt;
mod mcp_seats;
mod outputs;
mod progress;
mod protocol_check;
mod report;
mod seat_start;

use clap::Parser;

// A full run allocates and frees millions of small JSON values; mimalloc
// takes about a third off its wall time compared with the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = args::Cli::parse();
    let interrupt = match interrupt::Interrupt::install() {
        Ok(interrupt) => interrupt,
        Err(error) => {
            tell!("error: {error}");
            return std::process::ExitCode::from(exit::Exit::Io.code());
        }
    };
    let exit = commands::dispatch(cli.command, &interrupt);
    interrupt.finish(exit)
}
