//! Wire and record types of the SharedOS contract.
//!
//! ```
//! use sharedos_model::address::Address;
//! let agent = Address::agent("agent-mallory");
//! assert_eq!(agent.path(), vec!["agent".to_string(), "agent-mallory".to_string()]);
//! ```
//!
//! Every object that SharedOS parses strictly is strict here too: unknown keys
//! are refused by serde, and bounds are checked by [`validate::Validate`].
#![forbid(unsafe_code)]

pub mod access;
pub mod address;
pub mod audit;
pub mod canonical;
pub mod capability;
pub mod codes;
pub mod execution;
pub mod instant;
mod jcs;
pub mod message;
pub mod record;
pub mod role;
pub mod tool;
pub mod validate;
