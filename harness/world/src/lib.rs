//! The conformance world's fixtures: identities, grants, the file store and
//! its tools, the misbehaving fixture tools, the broker, and every host store
//! with the faults a condition can arm.
//!
//! Fixtures are deliberately undefended: they resolve exactly what they are
//! told, so a kernel cannot look correct because a fixture enforced a rule.
#![forbid(unsafe_code)]

pub mod arguments;
pub mod audit_log;
pub mod broker;
pub mod ceiling;
pub mod clock;
pub mod constants;
pub mod file_store;
pub mod file_tools;
pub mod fixture_tools;
pub mod fixtures;
pub mod grant_store;
pub mod grants;
pub mod ledger;
pub mod ledger_tools;
pub mod messaging;
pub mod options;
pub mod results;
pub mod transport;
pub mod vocabulary;
