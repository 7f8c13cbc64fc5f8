//! The binary as a user runs it, in one test binary so it links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod baseline;
mod certify_root;
mod decode;
mod engines;
mod evidence;
mod hostile;
mod interrupt;
mod late_lines;
mod live_mcp;
mod outputs;
mod progress;
mod protocol;
mod repeat_rule;
mod schemas;
mod threats;
mod vendors;
