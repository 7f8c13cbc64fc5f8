//! The standard loop under a drain (D11, and the consequences the
//! envelope states as E52–E54): what is in flight is honoured or refused,
//! nothing new is asked, and a late result ends the turn cancelled.
//!
//! Every turn here runs with a 10 s deadline and a 5 s grace, so the drain
//! starts at 5 s; the slow tools take 3 s.

use crate::support;

use serde_json::json;
use sharedos_drivers::decision::SessionOutcome;
use sharedos_drivers::standard_loop::{StandardLoop, StandardLoopOptions};
use sharedos_model::execution::{ExecutionOptions, ExecutionRequest, ExecutionStatus};
use sharedos_testkit::events::events_of;
use sharedos_testkit::world::read_policy;
use std::rc::Rc;
use support::script::{call, complete, escalate, Reply, ScriptDriver};
use support::{append_draft, ending, meta, World, SLOW_APPEND, SLOW_READ};

const TIMEOUT_MS: u64 = 10_000;
const GRACE_MS: u64 = 5_000;

fn seat(driver: ScriptDriver) -> (Rc<StandardLoop<Rc<ScriptDriver>>>, Rc<ScriptDriver>) {
    let driver = Rc::new(driver);
    (Rc::new(StandardLoop::new(driver.clone(), StandardLoopOptions::default()).unwrap()), driver)
}

fn request(world: &World, max_steps: Option<u32>) -> ExecutionRequest {
    let mut request = world.request(None, None);
    request.options = Some(ExecutionOptions { max_steps, max_tool_calls: None, timeout_ms: Some(TIMEOUT_MS) });
    request
}

#[tokio::test(start_paused = true)]
async fn d11_an_in_flight_tool_call_is_denied_turn_draining_and_the_turn_ends_cancelled() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::new(|i, _, request| match i {
        0 => Reply::Now(call(request, "c0", SLOW_READ, read_policy(), None)),
        _ => Reply::After(2500, call(request, "c1", "files.read", read_policy(), None)),
    }));
    let result = world.run_with(seated, request(&world, None), GRACE_MS).await;
    assert_eq!(ending(&result), (ExecutionStatus::Cancelled, Some("turn_cancelled".into()), Some(true)));
    let completed = events_of(&result, "tool.completed");
    assert_eq!(completed[1]["code"], json!("turn_draining"));
    assert_eq!(driver.log.nexts(), 2, "the seat is never asked again once draining");
    assert_eq!(driver.log.results_seen(), 1, "the drained refusal is not handed back");
    assert_eq!(driver.log.closes(), vec![SessionOutcome::Cancelled]);
}

#[tokio::test(start_paused = true)]
async fn d11_e52_terminal_decisions_in_flight_when_the_drain_starts_are_honoured() {
    let world = World::baseline();
    let cases = [
        (complete(json!("late but fine")), ExecutionStatus::Succeeded),
        (json!({"type": "fail", "error": {"code": "gave_up", "message": "m"}}), ExecutionStatus::Failed),
        (escalate("needs a human"), ExecutionStatus::Escalated),
    ];
    for (decision, status) in cases {
        let (seated, driver) = seat(ScriptDriver::replies(vec![Reply::After(6000, decision)]));
        let result = world.run_with(seated, request(&world, None), GRACE_MS).await;
        assert_eq!(result.status, status);
        assert_eq!(driver.log.nexts(), 1);
    }
}

#[tokio::test(start_paused = true)]
async fn d11_e53_a_result_arriving_while_draining_is_never_handed_to_the_seat() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::new(|i, _, request| match i {
        0 => Reply::After(3000, call(request, "c0", SLOW_READ, read_policy(), None)),
        _ => Reply::Now(complete(json!("never asked"))),
    }));
    let result = world.run_with(seated, request(&world, None), GRACE_MS).await;
    assert_eq!(ending(&result), (ExecutionStatus::Cancelled, Some("turn_cancelled".into()), Some(true)));
    assert_eq!(events_of(&result, "tool.completed")[0]["status"], json!("succeeded"), "the call ran and is recorded");
    assert_eq!(driver.log.nexts(), 1);
    assert_eq!(driver.log.results_seen(), 0);
}

#[tokio::test(start_paused = true)]
async fn d11_e54_a_late_result_on_the_last_step_ends_cancelled_not_step_limit_exceeded() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::new(|i, _, request| {
        Reply::After(3000, call(request, &format!("c{i}"), SLOW_READ, read_policy(), None))
    }));
    let result = world.run_with(seated, request(&world, Some(1)), GRACE_MS).await;
    assert_eq!(ending(&result).0, ExecutionStatus::Cancelled);
    assert_eq!(result.code(), Some("turn_cancelled"));
    assert_eq!(driver.log.nexts(), 1);
}

#[tokio::test(start_paused = true)]
async fn d11_e54_a_late_effectful_result_makes_the_cancellation_not_retryable() {
    let world = World::baseline();
    let (seated, _) = seat(ScriptDriver::new(|_, _, request| {
        Reply::After(3000, call(request, "c0", SLOW_APPEND, append_draft(), None))
    }));
    let result = world.run_with(seated, request(&world, Some(1)), GRACE_MS).await;
    assert_eq!(ending(&result), (ExecutionStatus::Cancelled, Some("turn_cancelled".into()), Some(false)));
    assert_eq!(events_of(&result, "tool.completed")[0]["status"], json!("succeeded"));
}

#[tokio::test(start_paused = true)]
async fn d11_e53_a_session_opening_during_the_grace_never_gets_a_first_next() {
    let world = World::baseline();
    let mut driver = ScriptDriver::replies(vec![Reply::Now(complete(json!("never asked")))]);
    driver.open_ms = 6000;
    driver.prompt_hash = Some("ab".repeat(32));
    let (seated, driver) = seat(driver);
    let result = world.run_with(seated, request(&world, None), GRACE_MS).await;
    assert_eq!(ending(&result), (ExecutionStatus::Cancelled, Some("turn_cancelled".into()), Some(true)));
    assert_eq!(driver.log.nexts(), 0);
    assert_eq!(driver.log.closes(), vec![SessionOutcome::Cancelled]);
    assert_eq!(meta(&result, "promptHash"), Some(json!("ab".repeat(32))), "what it was asked is still stated");
}

#[tokio::test(start_paused = true)]
async fn d11_no_next_is_asked_once_draining_even_between_quick_steps() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::new(|i, _, request| {
        Reply::After(1000, call(request, &format!("c{i}"), "files.read", read_policy(), None))
    }));
    let result = world.run_with(seated, request(&world, None), GRACE_MS).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    let asked_at = driver.log.next_at.borrow().clone();
    assert!(asked_at.iter().all(|at| *at < GRACE_MS), "a next was asked while draining: {asked_at:?}");
}
