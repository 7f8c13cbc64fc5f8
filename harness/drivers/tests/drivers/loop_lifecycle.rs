//! The standard loop around its session: identity, the prompt-hash
//! annotation (D7), the escalation ask (D8), and closing (D10).

use crate::support;

use serde_json::json;
use sharedos_drivers::decision::SessionOutcome;
use sharedos_drivers::standard_loop::{
    standard_manifest, LoopConstructionError, StandardLoop, StandardLoopOptions, STANDARD_RUNTIME_ID,
};
use sharedos_envelope::options::ExecuteOptions;
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_model::execution::{ExecutionOptions, ExecutionStatus};
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::events::{events_of, kinds};
use sharedos_testkit::world::read_policy;
use std::rc::Rc;
use std::time::Duration;
use support::script::{call, complete, escalate, script_manifest, Close, Reply, ScriptDriver};
use support::{ending, meta, World};

const HASH: &str = "0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a090807060504030201000";

fn seat(driver: ScriptDriver) -> (Rc<StandardLoop<Rc<ScriptDriver>>>, Rc<ScriptDriver>) {
    let driver = Rc::new(driver);
    (Rc::new(StandardLoop::new(driver.clone(), StandardLoopOptions::default()).unwrap()), driver)
}

fn with_timeout(world: &World, timeout_ms: u64) -> sharedos_model::execution::ExecutionRequest {
    let mut request = world.request(None, None);
    request.options = Some(ExecutionOptions { max_steps: None, max_tool_calls: None, timeout_ms: Some(timeout_ms) });
    request
}

#[tokio::test(start_paused = true)]
async fn a_loop_reports_its_drivers_manifest_and_an_unbranded_one_reports_the_standard_loop() {
    let branded = StandardLoop::new(ScriptDriver::replies(vec![]), StandardLoopOptions::default()).unwrap();
    assert_eq!(branded.manifest(), script_manifest());
    let unbranded = StandardLoop::unbranded(ScriptDriver::replies(vec![]), StandardLoopOptions::default()).unwrap();
    assert_eq!(unbranded.manifest().id, STANDARD_RUNTIME_ID);
    assert_eq!(unbranded.manifest(), standard_manifest());
    let world = World::baseline();
    let result = world.run(Rc::new(branded)).await;
    assert_eq!(meta(&result, "runtime").unwrap()["id"], json!("test.script-driver"));
}

#[tokio::test(start_paused = true)]
async fn d10_close_timeout_must_be_positive() {
    let options = StandardLoopOptions { close_timeout_ms: 0, ..StandardLoopOptions::default() };
    let built = StandardLoop::new(ScriptDriver::replies(vec![]), options);
    assert_eq!(built.err(), Some(LoopConstructionError::InvalidCloseTimeout));
    assert_eq!(StandardLoopOptions::default().close_timeout_ms, 1000);
}

#[tokio::test(start_paused = true)]
async fn d7_the_prompt_hash_is_annotated_after_open() {
    let world = World::baseline();
    let mut driver = ScriptDriver::replies(vec![Reply::Now(complete(json!("ok")))]);
    driver.prompt_hash = Some(HASH.into());
    let (seated, _) = seat(driver);
    let result = world.run(seated).await;
    assert_eq!(meta(&result, "promptHash"), Some(json!(HASH)));
}

#[tokio::test(start_paused = true)]
async fn d7_the_prompt_hash_survives_a_turn_cancelled_during_its_first_next() {
    let world = World::baseline();
    let mut driver = ScriptDriver::replies(vec![Reply::Hang]);
    driver.prompt_hash = Some(HASH.into());
    let (seated, driver) = seat(driver);
    let result = world.run_with(seated, with_timeout(&world, 1000), 0).await;
    assert_eq!(ending(&result).0, ExecutionStatus::Cancelled);
    assert_eq!(meta(&result, "promptHash"), Some(json!(HASH)));
    assert_eq!(driver.log.nexts(), 1);
}

#[tokio::test(start_paused = true)]
async fn d7_a_session_without_a_hash_states_none() {
    let world = World::baseline();
    let (seated, _) = seat(ScriptDriver::replies(vec![Reply::Now(complete(json!("ok")))]));
    let result = world.run(seated).await;
    assert_eq!(meta(&result, "promptHash"), None);
}

#[tokio::test(start_paused = true)]
async fn d8_an_escalation_is_annotated_and_ends_the_turn_escalated_without_an_operation() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::replies(vec![Reply::Now(escalate("owner must approve"))]));
    let result = world.run(seated).await;
    assert_eq!(result.status, ExecutionStatus::Escalated);
    assert_eq!(
        meta(&result, "escalationAsked"),
        Some(json!({"tool": "sharedos.escalate", "reason": "owner must approve"}))
    );
    assert!(events_of(&result, "tool.requested").is_empty());
    assert_eq!(world.escalations_recorded(), 1);
    assert_eq!(driver.log.closes(), vec![SessionOutcome::Escalated]);
}

#[tokio::test(start_paused = true)]
async fn d8_without_the_affordance_the_envelope_fails_the_escalation_tool_unavailable() {
    let world = World::without_escalation();
    let (seated, _) = seat(ScriptDriver::replies(vec![Reply::Now(escalate("owner must approve"))]));
    let result = world.run(seated).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("tool_unavailable".into()), None));
    assert_eq!(events_of(&result, "turn.failed"), vec![json!({"code": "tool_unavailable", "source": "envelope"})]);
    assert_eq!(world.escalations_recorded(), 0);
    assert!(meta(&result, "escalationAsked").is_some(), "the ask is stated before it is honoured");
}

#[tokio::test(start_paused = true)]
async fn d10_close_is_called_once_with_each_ending() {
    let world = World::baseline();
    let cases: Vec<(Vec<Reply>, SessionOutcome)> = vec![
        (vec![Reply::Now(complete(json!(1)))], SessionOutcome::Succeeded),
        (vec![Reply::Now(json!({"type": "fail", "error": {"code": "x", "message": "m"}}))], SessionOutcome::Failed),
        (vec![Reply::Now(json!({"type": "nonsense"}))], SessionOutcome::Failed),
        (vec![Reply::Throw], SessionOutcome::Failed),
        (vec![Reply::Now(escalate("why"))], SessionOutcome::Escalated),
    ];
    for (replies, expected) in cases {
        let (seated, driver) = seat(ScriptDriver::replies(replies));
        let _ = world.run(seated).await;
        assert_eq!(driver.log.closes(), vec![expected]);
    }
}

#[tokio::test(start_paused = true)]
async fn d10_a_spent_step_budget_closes_failed() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::new(|i, _, request| {
        Reply::Now(call(request, &format!("c{i}"), "files.read", read_policy(), None))
    }));
    let result = world.run_with(seated, world.request(Some(2), None), 0).await;
    assert_eq!(result.code(), Some("step_limit_exceeded"));
    assert_eq!(driver.log.closes(), vec![SessionOutcome::Failed]);
}

#[tokio::test(start_paused = true)]
async fn d10_a_deadline_closes_the_session_cancelled_once() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::replies(vec![Reply::Hang]));
    let result = world.run_with(seated, with_timeout(&world, 500), 0).await;
    assert_eq!(ending(&result), (ExecutionStatus::Cancelled, Some("turn_cancelled".into()), Some(true)));
    assert_eq!(driver.log.closes(), vec![SessionOutcome::Cancelled]);
}

#[tokio::test(start_paused = true)]
async fn d10_a_host_cancellation_closes_the_session_cancelled_once() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::replies(vec![Reply::Hang]));
    let executor = world.executor(seated, 5000);
    let cancel = AbortSignal::new();
    let trigger = cancel.clone();
    let request = world.request(None, None);
    let start = tokio::time::Instant::now();
    let (result, ()) =
        tokio::join!(executor.execute(request, ExecuteOptions { signal: Some(cancel), on_event: None }), async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            trigger.abort(AbortReason::HostCancelled);
        });
    let result = result.unwrap();
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert_eq!(start.elapsed(), Duration::from_millis(100), "no grace for the host's own cancellation");
    assert_eq!(driver.log.closes(), vec![SessionOutcome::Cancelled]);
}

#[tokio::test(start_paused = true)]
async fn d10_a_throwing_close_never_changes_the_outcome() {
    let world = World::baseline();
    let mut driver = ScriptDriver::replies(vec![Reply::Now(complete(json!("fine")))]);
    driver.close = Close::Throw;
    let (seated, driver) = seat(driver);
    let result = world.run(seated).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(result.output, Some(json!("fine")));
    assert_eq!(driver.log.closes(), vec![SessionOutcome::Succeeded]);
}

#[tokio::test(start_paused = true)]
async fn d10_a_hanging_close_is_abandoned_after_close_timeout_ms() {
    let world = World::baseline();
    for (timeout, expected) in [(None, 1000), (Some(50), 50)] {
        let mut driver = ScriptDriver::replies(vec![Reply::Now(complete(json!("fine")))]);
        driver.close = Close::Hang;
        let options =
            StandardLoopOptions { close_timeout_ms: timeout.unwrap_or(1000), ..StandardLoopOptions::default() };
        let driver = Rc::new(driver);
        let seated = Rc::new(StandardLoop::new(driver.clone(), options).unwrap());
        let start = tokio::time::Instant::now();
        let result = world.run(seated).await;
        assert_eq!(result.status, ExecutionStatus::Succeeded);
        assert_eq!(start.elapsed(), Duration::from_millis(expected));
        assert_eq!(driver.log.closes(), vec![SessionOutcome::Succeeded]);
    }
}

#[tokio::test(start_paused = true)]
async fn d10_a_session_without_close_is_left_alone() {
    let world = World::baseline();
    let mut driver = ScriptDriver::replies(vec![Reply::Now(complete(json!("fine")))]);
    driver.close = Close::Absent;
    let (seated, driver) = seat(driver);
    let result = world.run(seated).await;
    assert_eq!(kinds(&result).last().map(String::as_str), Some("turn.completed"));
    assert!(driver.log.closes().is_empty());
}
