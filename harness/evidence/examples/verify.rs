//! A bundle verifier built on the small crates alone: `sharedos-evidence`
//! (which grades every cell again on `sharedos-grading`) and
//! `sharedos-conformance-metadata` for the exit codes. It builds no
//! process seat, MCP server or driver.
//!
//! ```text
//! cargo run -p sharedos-evidence --example verify -- BUNDLE
//! ```
//!
//! It prints each failure's code and place, and exits as
//! `sharedos-conformance verify` does: 0 verified, 1 does not verify,
//! 2 usage, 3 the bundle cannot be read.

use sharedos_conformance_metadata::Exit;
use sharedos_evidence::verify::{verify, VerifyOptions};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(bundle), None) = (args.next(), args.next()) else {
        eprintln!("usage: verify BUNDLE");
        return ExitCode::from(Exit::Usage.code());
    };
    let bundle = PathBuf::from(bundle);
    let verification = match verify(&bundle, VerifyOptions::default()) {
        Ok(verification) => verification,
        Err(error) => {
            eprintln!("error: failed to {error}");
            return ExitCode::from(Exit::InvalidInput.code());
        }
    };
    for failure in &verification.failures {
        println!("FAIL {} at {}: {failure}", failure.code(), failure.place());
    }
    if verification.verified() {
        println!("verified: {} cells graded again", verification.regraded);
        ExitCode::from(Exit::Success.code())
    } else {
        println!("does not verify: {} failures", verification.failures.len());
        ExitCode::from(Exit::ConformanceFailure.code())
    }
}
