//! Every protocol violation of `PROTOCOL.md` ends its turn failed with its
//! own code, and the next turn gets a fresh process.

use crate::support::{code, fallback, run_scripted_turn, run_turn, standin};
use sharedos_model::execution::ExecutionStatus;
use sharedos_process::seat::ProcessSeat;
use std::rc::Rc;

fn violation(mode: &str) -> (String, String) {
    let seat = Rc::new(ProcessSeat::new(standin(mode), fallback()));
    let turn = run_turn(&seat, 60_000);
    assert_eq!(turn.result.status, ExecutionStatus::Failed, "{mode}: {:?}", turn.result);
    let message = turn.result.error.as_ref().map(|e| e.message.clone()).unwrap_or_default();
    assert!(seat.session().is_none(), "{mode}: the process is discarded after a violation");
    assert_eq!(turn.runtime.violation().map(|v| v.code().to_string()), Some(code(&turn)), "{mode}");
    (code(&turn), message)
}

#[test]
fn each_violation_ends_the_turn_with_its_own_code() {
    let cases = [
        ("not_json", "runtime_not_json"),
        ("not_object", "runtime_not_object"),
        ("unknown_type", "runtime_unknown_type"),
        ("bad_message", "runtime_bad_message"),
        ("duplicate_id", "runtime_duplicate_id"),
        ("wrong_turn", "runtime_wrong_turn"),
        ("exit_mid_turn", "runtime_exited"),
        ("unresponsive", "runtime_unresponsive"),
        ("deaf", "runtime_unresponsive"),
        ("never_ready", "runtime_not_ready"),
        ("protocol_mismatch", "runtime_protocol_mismatch"),
        ("flood", "runtime_flood"),
        ("line_too_long", "runtime_line_too_long"),
        ("report_early", "runtime_out_of_order"),
    ];
    for (mode, expected) in cases {
        let (code, message) = violation(mode);
        assert_eq!(code, expected, "{mode}: {message}");
    }
}

#[test]
fn a_diagnostic_quotes_what_was_received_and_the_stderr_tail() {
    assert!(violation("not_json").1.contains("this is not json"));
    assert!(violation("exit_mid_turn").1.contains("giving up"));
}

#[test]
fn a_command_that_does_not_exist_fails_the_turn_as_not_ready() {
    let mut launch = standin("complete");
    launch.command = "/nonexistent/runtime".into();
    let seat = Rc::new(ProcessSeat::new(launch, fallback()));
    let turn = run_turn(&seat, 1000);
    assert_eq!(code(&turn), "runtime_not_ready");
    assert!(turn.result.error.unwrap().message.contains("failed to start `/nonexistent/runtime`"));
}

#[test]
fn a_scripted_seat_that_waits_after_closed_with_nothing_owed_is_out_of_order() {
    let seat = Rc::new(ProcessSeat::new(standin("never_reports"), fallback()));
    let turn = run_scripted_turn(&seat, 1000);
    assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "the turn itself ended well");
    assert_eq!(turn.runtime.violation().map(|v| v.code()), Some("runtime_out_of_order"));
    assert!(turn.runtime.receipts().is_none());
}
