//! The turn's ending as the harness's own stdout tells it (D49), read by
//! the vendor's live reader: the same code `decode` runs, so a stream a
//! seat graded and the same stream decoded end the turn alike. Tool calls
//! seen there are ignored: calls leave over MCP, and acting on one from
//! stdout would open a second, unmediated path.

use crate::harness::HarnessExit;
use serde_json::{json, Value};
use sharedos_drivers::frame::HarnessStep;
use sharedos_drivers::live::{read_stream, LiveOutcome};
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_envelope::runtime::{complete, fail};
use sharedos_model::tool::ProtocolError;

/// The code of a harness that could not be started.
pub const HARNESS_NOT_STARTED: &str = "harness_not_started";
/// The code of a harness that exited non-zero without an ending.
pub const HARNESS_EXITED_WITHOUT_OUTCOME: &str = "harness_exited_without_outcome";

/// The outcome of `vendor`'s harness that ended as `exit`: the ending its
/// live reader finds on stdout (one the CLI went back on to retry does not
/// count); without one, a clean exit completes with the prose it wrote and
/// any other exit fails.
#[must_use]
pub fn harness_outcome(vendor: Vendor, exit: &HarnessExit) -> Value {
    let id = vendor.id();
    let (code, stdout): (i32, &[String]) = match exit {
        HarnessExit::NotStarted { .. } => {
            return fail(ProtocolError::new(HARNESS_NOT_STARTED, format!("The {id} CLI could not be started.")));
        }
        HarnessExit::Exited { code, stdout } => (*code, stdout),
        // Stopped by the turn's signal: it said nothing that decides the turn.
        HarnessExit::Stopped => (-1, &[]),
    };
    let mut reader = vendor.live_reader();
    let reading = read_stream(reader.as_mut(), &stdout.join("\n"));
    match reading.outcome {
        LiveOutcome::Complete { output, .. } => complete(output),
        LiveOutcome::Failed { code, message, retryable, .. } => {
            let mut error = ProtocolError::new(code, message);
            error.retryable = retryable.then_some(true);
            fail(error)
        }
        LiveOutcome::NoOutcome if code == 0 => {
            let prose: Vec<&str> = reading
                .steps
                .iter()
                .filter_map(|step| match &step.step {
                    HarnessStep::Message { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            complete(json!({ "text": prose.join("\n") }))
        }
        LiveOutcome::NoOutcome => fail(ProtocolError::new(
            HARNESS_EXITED_WITHOUT_OUTCOME,
            format!("The {id} CLI exited with code {code} without completing the turn."),
        )),
    }
}
