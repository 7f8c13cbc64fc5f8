//! Integration tests of `kernel`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod audit;
mod escalation;
mod invoke_order;
mod leases;
mod listing;
mod messaging;
mod support;
