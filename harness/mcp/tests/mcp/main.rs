//! The MCP harness runtime's rules (D40–D54),
//! each against the reference kernel and envelope, with rmcp's own client
//! in the harness's seat.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod containment;
mod endings;
mod fuzz_server;
mod interop;
mod live_cli;
mod recipes;
mod server_rules;
mod support;
mod turn_rules;
