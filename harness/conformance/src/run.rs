//! Running cells: building the world and the request of each turn, seating
//! the runtime, executing on a paused clock, and assembling a record per turn.

pub mod adversary;
pub mod attempt_call;
pub mod cache;
pub mod process_script;
pub mod process_seats;
pub mod quiet;
pub mod request;
pub mod seat;
pub mod transcript;
pub mod turns;
