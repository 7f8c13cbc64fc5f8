//! Integration tests of `conformance`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod baseline;
mod driven_columns;
mod fail_closed_rows;
mod families_annotate;
mod families_drain;
mod families_loader;
mod families_report;
mod families_retryable;
mod fuzz_readers;
mod hostile_files;
mod judge;
mod judge_turn;
mod judge_turn_values;
mod judging;
mod loader;
mod markdown;
mod matrix_rules;
mod mcp_column;
mod messaging_rows;
mod process_seat;
mod reason_codes;
mod receipt;
mod record;
mod support;
mod world_set;
