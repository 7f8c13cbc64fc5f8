//! The process seats one worker runs: each started on first use and kept
//! for every row the worker runs (or, for a per-turn seat, started afresh
//! for each turn), shut down when the worker is done.

use sharedos_grading::input::seat::{ProcessScope, Seat};
use sharedos_model::execution::RuntimeManifest;
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_process::breach::{Breach, BreachPhase};
use sharedos_process::seat::ProcessSeat;
use sharedos_process::violation::Violation;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// See the module documentation.
#[derive(Debug, Default)]
pub struct WorkerSeats {
    seats: Vec<Seat>,
    running: RefCell<BTreeMap<usize, Rc<ProcessSeat>>>,
}

impl WorkerSeats {
    /// A worker's seats for `seats` (the suite's), none started yet.
    #[must_use]
    pub fn new(seats: &[Seat]) -> WorkerSeats {
        WorkerSeats { seats: seats.to_vec(), running: RefCell::default() }
    }

    /// The seat at `index` for one turn, if the suite has one there.
    #[must_use]
    pub fn seat(&self, index: usize) -> Option<Rc<ProcessSeat>> {
        let seat = self.seats.get(index)?;
        let fresh = || Rc::new(ProcessSeat::new(seat.launch.clone(), fallback_manifest(seat)));
        if seat.process == ProcessScope::PerTurn {
            return Some(fresh());
        }
        Some(Rc::clone(self.running.borrow_mut().entry(index).or_insert_with(fresh)))
    }

    /// The suite's seats.
    #[must_use]
    pub fn seats(&self) -> &[Seat] {
        &self.seats
    }
}

/// The manifest a turn records when its process never said `ready`.
fn fallback_manifest(seat: &Seat) -> RuntimeManifest {
    let name = seat.column_id.trim_start_matches("process:");
    RuntimeManifest {
        id: format!("sharedos-seat.{name}"),
        version: "0".to_string(),
        protocol_version: PROTOCOL_VERSION.to_string(),
        metadata: None,
    }
}

/// Starts `seat`'s process once, outside any turn, and shuts it down: the
/// manifest it said `ready` with, or why it cannot start. A run checks
/// this first, so a seat that cannot start says why once rather than in
/// every cell.
///
/// # Errors
/// The breach that kept the process from starting.
pub fn try_start(seat: &Seat) -> Result<RuntimeManifest, Breach> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|error| {
        let violation = Violation::FailedToStart { command: seat.launch.command.clone(), error: error.to_string() };
        violation.breach(BreachPhase::Start, None, "")
    })?;
    let process = ProcessSeat::new(seat.launch.clone(), fallback_manifest(seat));
    let started = runtime.block_on(async {
        let started = process.start().await.map(|_| process.manifest());
        process.discard(0);
        started
    });
    started
}
