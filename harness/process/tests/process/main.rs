//! Integration tests of `process`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exchanges;
mod fuzz_protocol;
mod orphans;
mod reference;
mod schemas;
mod support;
mod time;
mod violations;
