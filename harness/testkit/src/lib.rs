//! Test support the harness crates' integration tests share. Only helpers
//! that two or more crates' tests use live here; a crate's own doubles stay
//! in its `tests/<crate>/support`. Identities, instants and paths of the
//! conformance world come from `sharedos_world::constants`, not from here.
//!
//! A dev-dependency only: the crates whose tests use it (kernel, envelope,
//! drivers) are also its dependencies, a cycle cargo allows for
//! integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod call;
pub mod events;
pub mod harness_request;
pub mod json;
pub mod mutate;
pub mod result;
pub mod world;
