//! Every protocol violation of `PROTOCOL.md` ends its turn failed with its
//! own code, and the next turn gets a fresh process.

use crate::support::{code, each_in_parallel, fallback, run_scripted_turn, run_turn, standin};
use sharedos_model::execution::ExecutionStatus;
use sharedos_process::breach::BreachPhase;
use sharedos_process::seat::ProcessSeat;
use std::rc::Rc;

fn violation(mode: &str) -> (String, String) {
    let seat = Rc::new(ProcessSeat::new(standin(mode), fallback()));
    let turn = run_turn(&seat, 60_000);
    assert_eq!(turn.result.status, ExecutionStatus::Failed, "{mode}: {:?}", turn.result);
    let message = turn.result.error.as_ref().map(|e| e.message.clone()).unwrap_or_default();
    assert!(seat.session().is_none(), "{mode}: the process is discarded after a violation");
    assert_eq!(turn.runtime.breach().map(|b| b.code), Some(code(&turn)), "{mode}");
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
        ("long_id", "runtime_bad_message"),
        ("wrong_turn", "runtime_wrong_turn"),
        ("exit_mid_turn", "runtime_exited"),
        ("unresponsive", "runtime_unresponsive"),
        ("deaf", "runtime_unresponsive"),
        ("never_ready", "runtime_not_ready"),
        ("protocol_mismatch", "runtime_protocol_mismatch"),
        ("manifest_version_mismatch", "runtime_protocol_mismatch"),
        ("seen_ahead", "runtime_bad_seen"),
        ("flood", "runtime_flood"),
        ("line_too_long", "runtime_line_too_long"),
        ("report_early", "runtime_out_of_order"),
    ];
    let checked = each_in_parallel(cases.to_vec(), |(mode, expected)| {
        let (code, message) = violation(mode);
        assert_eq!(code, expected, "{mode}: {message}");
    });
    assert_eq!(checked.len(), 17);
}

#[test]
fn a_diagnostic_quotes_what_was_received_and_the_stderr_tail() {
    assert!(violation("not_json").1.contains("this is not json"));
    let seat = Rc::new(ProcessSeat::new(standin("exit_mid_turn"), fallback()));
    let breach = run_turn(&seat, 60_000).runtime.breach().unwrap();
    assert_eq!(breach.stderr_tail.as_deref(), Some("giving up"));
}

/// The words say what the harness waited for, and the stderr tail is the
/// breach's own field, quoted once wherever the breach is shown.
#[test]
fn an_exit_mid_turn_reads_mid_turn_and_leaves_stderr_to_its_own_field() {
    let seat = Rc::new(ProcessSeat::new(standin("exit_mid_turn"), fallback()));
    let breach = run_turn(&seat, 60_000).runtime.breach().unwrap();
    assert_eq!(
        (breach.code.as_str(), breach.message.as_str(), breach.phase),
        ("runtime_exited", "the runtime exited or closed its output mid-turn", BreachPhase::Turn)
    );
}

/// A runtime that exits on `hello` is said to have exited before ready,
/// not mid-turn.
#[test]
fn a_runtime_that_exits_before_ready_is_said_to_exit_before_ready() {
    let seat = Rc::new(ProcessSeat::new(standin("exits_on_hello"), fallback()));
    let breach = run_turn(&seat, 1000).runtime.breach().unwrap();
    assert_eq!(
        (breach.code.as_str(), breach.message.as_str(), breach.phase),
        ("runtime_exited", "the runtime exited or closed its output before it said ready", BreachPhase::Start)
    );
    assert_eq!(breach.stderr_tail.as_deref(), Some("no hello for me"));
}

/// An id of 200 characters is said to have 200, quoted short.
#[test]
fn a_request_id_of_200_characters_is_said_to_have_200() {
    let (code, message) = violation("long_id");
    assert_eq!(code, "runtime_bad_message");
    let expected = format!(
        "the runtime broke sharedos-runtime/2: the runtime chose a request id of 200 characters, not 1 to 128: \"{}…\"",
        "e".repeat(40)
    );
    assert_eq!(message, expected);
}

#[test]
fn a_scripted_seat_that_waits_after_closed_with_nothing_owed_is_out_of_order() {
    let seat = Rc::new(ProcessSeat::new(standin("never_reports"), fallback()));
    let turn = run_scripted_turn(&seat, 1000);
    assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "the turn itself ended well");
    assert_eq!(turn.runtime.breach().map(|b| b.code).as_deref(), Some("runtime_out_of_order"));
    assert!(turn.runtime.receipts().is_none());
}

#[test]
fn a_manifest_naming_another_protocol_version_is_a_protocol_mismatch_quoting_its_ready() {
    let seat = Rc::new(ProcessSeat::new(standin("manifest_version_mismatch"), fallback()));
    let turn = run_turn(&seat, 1000);
    let breach = turn.runtime.breach().unwrap();
    assert_eq!(breach.code, "runtime_protocol_mismatch");
    assert_eq!(breach.phase, BreachPhase::Start);
    assert!(breach.message.contains("manifest protocolVersion \"2\""), "{}", breach.message);
    assert!(breach.received.unwrap().contains("\"protocolVersion\": \"2\""));
}

#[test]
fn a_wait_that_says_it_saw_more_lines_than_were_written_is_refused_at_once() {
    let (code, message) = violation("seen_ahead");
    assert_eq!(code, "runtime_bad_seen");
    assert!(
        message.contains("the runtime's wait says it has seen 6 lines, but the harness has written only 1 since"),
        "{message}"
    );
}

#[test]
fn a_runtime_whose_waits_never_count_is_told_why_when_it_becomes_unresponsive() {
    let (code, message) = violation("seen_behind");
    assert_eq!(code, "runtime_unresponsive");
    assert!(
        message.contains("seen counts every line the runtime has read since the turn's `turn` message"),
        "{message}"
    );
}

#[test]
fn a_command_that_cannot_be_started_is_its_own_violation() {
    let mut launch = standin("complete");
    launch.command = "/nonexistent/runtime".into();
    let seat = Rc::new(ProcessSeat::new(launch, fallback()));
    let turn = run_turn(&seat, 1000);
    assert_eq!(code(&turn), "runtime_failed_to_start");
    assert_eq!(turn.runtime.breach().unwrap().phase, BreachPhase::Start);
    assert!(turn.result.error.unwrap().message.contains("could not be started: `/nonexistent/runtime`"));
}

/// A violation after the outcome is recorded on the turn that wrote it,
/// with the line quoted; the turn's own ending stands.
#[test]
fn a_second_outcome_or_a_stray_line_after_it_is_a_breach_of_its_own_turn() {
    for (mode, code, quoted) in [
        ("second_outcome", "runtime_after_outcome", "\"again\""),
        ("stray_after_outcome", "runtime_not_json", "a stray line after the outcome"),
    ] {
        let seat = Rc::new(ProcessSeat::new(standin(mode), fallback()));
        let turn = run_scripted_turn(&seat, 1000);
        assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "{mode}: the first outcome stands");
        let breach = turn.runtime.breach().unwrap_or_else(|| panic!("{mode}: no breach"));
        assert_eq!((breach.code.as_str(), breach.phase), (code, BreachPhase::AfterOutcome), "{mode}");
        assert!(breach.received.as_deref().unwrap_or_default().contains(quoted), "{mode}: {breach:?}");
        assert!(seat.session().is_none(), "{mode}: the process is discarded");
    }
}

/// A line after the report fails the turn that wrote it, quoting the line
/// and the stderr tail, and the seat's next turn runs on a fresh process.
#[test]
fn a_stray_line_after_the_report_is_a_breach_of_its_own_turn_and_not_the_next() {
    let seat = Rc::new(ProcessSeat::new(standin("stray_after_report"), fallback()));
    let turn = run_scripted_turn(&seat, 1000);
    let breach = turn.runtime.breach().expect("a breach after the report");
    assert_eq!((breach.code.as_str(), breach.phase), ("runtime_not_json", BreachPhase::AfterReport));
    assert_eq!(breach.received.as_deref(), Some("one line too many"));
    assert!(breach.stderr_tail.as_deref().unwrap_or_default().contains("about to say too much"), "{breach:?}");
    assert!(turn.runtime.receipts().is_some(), "the report itself was taken");
    let next = run_scripted_turn(&seat, 1000);
    assert_eq!(next.result.status, ExecutionStatus::Succeeded);
    assert!(next.runtime.breach().is_some(), "the fresh process strays again, on its own turn");
    assert_eq!(next.runtime.breach().unwrap().phase, BreachPhase::AfterReport);
}

#[test]
fn a_scripted_seat_that_reports_once_and_stays_quiet_breaks_nothing() {
    let seat = Rc::new(ProcessSeat::new(standin("reports"), fallback()));
    for _ in 0..2 {
        let turn = run_scripted_turn(&seat, 1000);
        assert_eq!(turn.result.status, ExecutionStatus::Succeeded);
        assert_eq!(turn.runtime.breach(), None);
        assert_eq!(turn.runtime.receipts(), Some(vec![]));
    }
    assert!(seat.session().is_some(), "the process is kept");
}

/// A process serves many turns: a breach quotes only the stderr its own
/// turn wrote, whatever rows the process served before.
#[test]
fn a_breach_quotes_only_the_stderr_of_its_own_turn() {
    let seat = Rc::new(ProcessSeat::new(standin("noisy_strays"), fallback()));
    let first = run_scripted_turn(&seat, 1000);
    assert_eq!(first.runtime.breach(), None);
    let second = run_scripted_turn(&seat, 1000);
    let breach = second.runtime.breach().expect("a breach after the second report");
    assert_eq!(breach.stderr_tail.as_deref(), Some("noise of turn 2"));
}

/// A process that exits between turns (after its fence's echo) is started
/// again for the next turn, which it does not fail.
#[test]
fn a_runtime_that_exits_after_its_fence_fails_no_later_turn() {
    let seat = Rc::new(ProcessSeat::new(standin("exits_after_fence"), fallback()));
    for turn in 1..=3 {
        let ran = run_scripted_turn(&seat, 1000);
        assert_eq!(ran.result.status, ExecutionStatus::Succeeded, "turn {turn}");
        assert_eq!(ran.runtime.breach(), None, "turn {turn}");
        assert_eq!(ran.runtime.receipts(), Some(vec![]), "turn {turn}");
    }
}

/// One that exits after its report, owing the fence's echo, breaks the
/// protocol on that turn, and says what it owed.
#[test]
fn a_runtime_that_exits_before_echoing_the_fence_breaks_its_own_turn() {
    let seat = Rc::new(ProcessSeat::new(standin("exits_after_report"), fallback()));
    let ran = run_scripted_turn(&seat, 1000);
    let breach = ran.runtime.breach().expect("a breach");
    assert_eq!(
        (breach.code.as_str(), breach.message.as_str(), breach.phase),
        (
            "runtime_exited",
            "the runtime exited or closed its output before it echoed the turn's fence",
            BreachPhase::AfterReport
        )
    );
    assert_eq!(run_scripted_turn(&seat, 1000).runtime.breach().map(|b| b.phase), Some(BreachPhase::AfterReport));
}

/// Each way a line can come after its turn's report, in the same write or
/// later, is a breach of that turn with the same words on every run, and
/// its process is replaced. (That no other row is blamed is the conformance
/// crate's twenty-run test.)
#[test]
fn a_late_line_is_blamed_on_the_turn_that_wrote_it_with_the_same_words_every_run() {
    let before_closed =
        "the runtime wrote its report before it read closed: a report comes after closed, and its seen counts closed";
    let cases: [(&str, &str, BreachPhase, &str); 5] = [
        ("stray_after_report", "runtime_not_json", BreachPhase::AfterReport, "one line too many"),
        ("stray_later", "runtime_not_json", BreachPhase::AfterReport, "one line too many"),
        (
            "report_twice",
            "runtime_out_of_order",
            BreachPhase::AfterReport,
            "after its report (after the report, only fenced may come)",
        ),
        ("report_before_closed", "runtime_out_of_order", BreachPhase::AfterOutcome, before_closed),
        ("report_before_closed_later", "runtime_out_of_order", BreachPhase::AfterOutcome, before_closed),
    ];
    let checked = each_in_parallel(cases.to_vec(), |(mode, code, phase, words)| {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..3 {
            let seat = Rc::new(ProcessSeat::new(standin(mode), fallback()));
            let turn = run_scripted_turn(&seat, 1000);
            assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "{mode}: the turn's own ending stands");
            let breach = turn.runtime.breach().unwrap_or_else(|| panic!("{mode}: no breach"));
            assert_eq!((breach.code.as_str(), breach.phase), (code, phase), "{mode}: {breach:?}");
            let said = format!("{} {}", breach.message, breach.received.clone().unwrap_or_default());
            assert!(said.contains(words), "{mode}: {said}");
            seen.insert(format!("{breach:?}"));
            assert!(seat.session().is_none(), "{mode}: the process is replaced");
        }
        assert_eq!(seen.len(), 1, "{mode}: one breach, word for word, on every run: {seen:?}");
    });
    assert_eq!(checked.len(), 5);
}

/// A fence not echoed is a breach of the turn it fenced, after its
/// report, and so is an echo of another number.
#[test]
fn a_fence_not_echoed_or_echoed_wrong_breaks_the_turn_it_fenced() {
    let seat = Rc::new(ProcessSeat::new(standin("never_fences"), fallback()));
    let breach = run_scripted_turn(&seat, 1000).runtime.breach().expect("a breach");
    assert_eq!((breach.code.as_str(), breach.phase), ("runtime_unresponsive", BreachPhase::AfterReport));
    assert_eq!(
        breach.message,
        "the runtime did not echo the turn's fence within 1500 ms of real time (a sharedos-runtime/2 runtime answers \
         each `fence` with `fenced`, once it has written everything about the turn)"
    );
    let seat = Rc::new(ProcessSeat::new(standin("fences_wrong"), fallback()));
    let breach = run_scripted_turn(&seat, 1000).runtime.breach().expect("a breach");
    assert_eq!(
        (breach.code.as_str(), breach.message.as_str(), breach.phase),
        (
            "runtime_out_of_order",
            "the runtime echoed a fence other than the one the harness wrote for the turn",
            BreachPhase::AfterReport
        )
    );
    assert_eq!(breach.received.as_deref(), Some(r#"{"type": "fenced", "turn": "world-test.turn", "fence": 2}"#));
}

/// The fence's number counts the fences of the process, and every turn a
/// process serves is fenced before the next `turn` is written.
#[test]
fn every_turn_of_a_process_is_fenced_with_the_next_number() {
    let seat = Rc::new(ProcessSeat::new(standin("counts_fences"), fallback()));
    for number in 1..=3u64 {
        let turn = run_scripted_turn(&seat, 1000);
        assert_eq!(turn.runtime.breach(), None, "turn {number}");
        let fences = turn.result.output.unwrap()["fences"].clone();
        assert_eq!(fences, serde_json::json!(number - 1), "the fences it echoed before this turn");
    }
}

/// A runtime of the previous version is refused, and told what changed.
#[test]
fn a_runtime_of_sharedos_runtime_1_is_refused_and_told_what_changed() {
    let seat = Rc::new(ProcessSeat::new(standin("previous_version"), fallback()));
    let breach = run_turn(&seat, 1000).runtime.breach().unwrap();
    assert_eq!((breach.code.as_str(), breach.phase), ("runtime_protocol_mismatch", BreachPhase::Start));
    assert!(breach.message.contains("adds `seen` to `report`, and a `fence` after each turn"), "{}", breach.message);
}

/// Once the fence is written the harness writes nothing more about the
/// turn: a prompted seat's request read after it gets no answer, so the
/// runtime reads `closed` and `fence`, and then the next `turn`.
#[test]
fn nothing_about_a_turn_is_written_after_its_fence() {
    let seat = Rc::new(ProcessSeat::new(standin("emits_after_outcome"), fallback()));
    let first = run_turn(&seat, 1000);
    assert_eq!(first.result.output, Some(serde_json::json!({"read": []})));
    let second = run_turn(&seat, 1000);
    assert_eq!(second.runtime.breach(), None);
    assert_eq!(second.result.output, Some(serde_json::json!({"read": ["closed", "fence"]})), "nothing after the fence");
}

/// A report's `seen` is a count the runtime states: one past the lines the
/// harness wrote is refused, as a wait's is.
#[test]
fn a_report_that_says_it_saw_more_lines_than_were_written_is_refused() {
    let seat = Rc::new(ProcessSeat::new(standin("report_seen_ahead"), fallback()));
    let breach = run_scripted_turn(&seat, 1000).runtime.breach().expect("a breach");
    assert_eq!(
        (breach.code.as_str(), breach.message.as_str(), breach.phase),
        (
            "runtime_bad_seen",
            "the runtime's report says it has seen 7 lines, but the harness has written only 2 since the turn's \
             `turn` message, that message included",
            BreachPhase::AfterOutcome
        )
    );
}
