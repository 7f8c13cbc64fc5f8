//! Integration tests of `world`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod broker;
mod file_store;
mod file_tools;
mod fixture_tools;
mod fixtures;
mod grants;
mod ledger;
mod messaging;
mod stores;
mod transport;
