//! Seating a runtime from outside: `sharedos-runtime/1` over a child
//! process's stdin and stdout (`harness/process/PROTOCOL.md`).
#![forbid(unsafe_code)]

pub mod breach;
pub mod launch;
pub mod message;
pub mod placement;
pub mod runtime;
pub mod seat;
pub mod session;
pub mod violation;
