//! Cages against real processes: a runtime whose child double-forks a
//! grandchild into a session of its own that ignores SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cages;
mod orphans;
