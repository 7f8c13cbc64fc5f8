//! Integration tests of `kernel`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod audit;
mod escalation;
mod invoke_order;
mod leases;
mod listing;
mod messaging;
mod support;
mod world_broker;
mod world_file_store;
mod world_file_tools;
mod world_fixture_tools;
mod world_fixtures;
mod world_grants;
mod world_ledger;
mod world_messaging;
mod world_stores;
mod world_transport;
