//! Integration tests of `standin`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod child_process;
mod live_mcp;
mod live_turn;
mod support;
