//! The reference SharedOS kernel: the system under test by default.
#![forbid(unsafe_code)]

pub mod error;
pub mod port;
pub mod signal;
