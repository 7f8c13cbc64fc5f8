//! Running cells: building the request of each turn, seating the runtime,
//! executing, assembling records, grading, and snapshotting.

pub mod cell;
pub mod hashes;
pub mod matrix;
pub mod memos;
pub mod report;
pub mod request;
pub mod seat;
pub mod snapshot;
pub mod turns;
