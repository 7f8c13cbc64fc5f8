//! A process seat that cannot start is said once, with why, rather than
//! in every cell it would have run: `run` reads it from its cells (a
//! worker whose process did not start fails every later turn with the
//! same breach at once), `certify` starts the seat once first.

use crate::exit::Exit;
use sharedos_conformance::run::process_seats::try_start;
use sharedos_conformance::suite::cell::CellRun;
use sharedos_grading::input::loader::Suite;
use sharedos_grading::input::seat::Seat;
use sharedos_process::breach::Breach;

/// Where a runtime author reads how a runtime starts.
pub const DOCUMENT: &str = "harness/process/PROTOCOL.md";

/// Starts once each process seat whose column `runs`: one that cannot
/// start says why here, once, and nothing runs.
///
/// # Errors
/// [`Exit::SeatCannotStart`] when any of them cannot start.
pub fn seats_start(suite: &Suite, runs: impl Fn(&str) -> bool) -> Result<(), Exit> {
    let mut failed = false;
    for seat in suite.seats.iter().filter(|s| s.mcp.is_none() && runs(&s.column_id)) {
        if let Err(breach) = try_start(seat) {
            tell!("{}", cannot_start(seat, &breach));
            failed = true;
        }
    }
    if failed {
        Err(Exit::SeatCannotStart)
    } else {
        Ok(())
    }
}

/// Says once, for each process seat whose runtime did not start for one
/// of its cells, why it cannot start.
///
/// # Errors
/// [`Exit::SeatCannotStart`] when any could not.
pub fn seats_started(suite: &Suite, cells: &[CellRun]) -> Result<(), Exit> {
    let mut failed = false;
    for seat in suite.seats.iter().filter(|s| s.mcp.is_none()) {
        let mut breaches =
            cells.iter().filter(|c| c.key.column == seat.column_id).filter_map(|c| c.start_breach.as_ref());
        if let Some(breach) = breaches.next() {
            tell!("{}", cannot_start(seat, breach));
            failed = true;
        }
    }
    if failed {
        Err(Exit::SeatCannotStart)
    } else {
        Ok(())
    }
}

/// Why `seat` cannot start, in words: its code, what it wrote, the end of
/// its stderr, and where the document says how to start.
pub fn cannot_start(seat: &Seat, breach: &Breach) -> String {
    let mut text = format!(
        "error: seat {} ({}) cannot start: `{}`: {}",
        seat.column_id,
        seat.file.display(),
        breach.code,
        breach.message
    );
    if let Some(received) = &breach.received {
        text.push_str(&format!("\nreceived: {received}"));
    }
    if let Some(stderr) = &breach.stderr_tail {
        text.push_str(&format!("\nits stderr ended with:\n{stderr}"));
    }
    text.push_str(&format!("\nsee {DOCUMENT}, sections \"Starting: hello and ready\" and \"Violations\""));
    text
}
