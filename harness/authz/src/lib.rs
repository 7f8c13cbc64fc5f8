//! SharedOS's authorization rules, as pure synchronous functions over a
//! resolved authority. No I/O and no async: every store is a port passed in.
#![forbid(unsafe_code)]

pub mod activity;
pub mod authority;
pub mod authorizer;
pub mod delegation;
pub mod matching;
pub mod memory;
pub mod ports;
pub mod required;
