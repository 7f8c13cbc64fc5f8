//! Integration tests of `authz`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod activity;
mod authority;
mod authorizer;
mod common;
mod delegation;
mod matching;
mod memory;
