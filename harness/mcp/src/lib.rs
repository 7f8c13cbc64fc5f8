//! The MCP harness runtime: a vendor CLI keeps its own loop and its own
//! model, and the turn's permission-filtered catalogue is served to it as
//! a turn-scoped MCP server (D40–D54). Every `tools/call`
//! still goes through the envelope and the kernel; what is given up is
//! control of the loop.
#![forbid(unsafe_code)]

pub mod bearer;
pub mod bridge;
pub mod call_result;
pub mod catalog;
pub mod containment;
pub mod ending;
pub mod epoch;
pub mod harness;
pub mod home;
pub mod http;
pub mod latch;
pub mod lines;
pub mod live;
pub mod path;
pub mod recipe;
pub mod relay;
pub mod runtime;
pub mod scripted_client;
pub mod serve;
pub mod server;
pub mod stdio;
