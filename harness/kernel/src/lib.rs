//! The reference SharedOS kernel: the system under test by default.
#![forbid(unsafe_code)]

pub mod admission;
pub mod audit;
pub mod builder;
pub mod decision;
pub mod escalation;
pub mod invoke;
pub mod kernel;
pub mod lease;
mod lease_table;
pub mod listing;
pub mod message_tool;
pub mod messaging;
pub mod ports;
pub mod registry;
pub mod turn_kernel;
