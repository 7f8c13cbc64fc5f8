//! Integration tests of `evidence`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod archive;
mod certify;
mod diff;
mod fuzz_readers;
mod merge;
mod messaging_regrade;
mod page;
mod repeats;
mod schemas;
mod signature;
mod statement_fields;
mod support;
mod tampering;
