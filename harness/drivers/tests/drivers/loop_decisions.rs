//! The standard loop's handling of decisions: strict parsing (D1, D2), the
//! step budget (D3), declared steps (D4–D6), and contained throws (D9).

use crate::support;

use serde_json::{json, Value};
use sharedos_drivers::decision::{AgentTurnDecision, AgentTurnInput};
use sharedos_drivers::standard_loop::{LoopError, StandardLoop, StandardLoopOptions};
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::tool::ToolStatus;
use sharedos_testkit::events::events_of;
use sharedos_testkit::world::read_policy;
use std::cell::RefCell;
use std::rc::Rc;
use support::script::{call, complete, escalate, Reply, ScriptDriver};
use support::{ending, World};

fn seat(driver: ScriptDriver) -> (Rc<StandardLoop<Rc<ScriptDriver>>>, Rc<ScriptDriver>) {
    let driver = Rc::new(driver);
    let seated = StandardLoop::new(driver.clone(), StandardLoopOptions::default()).unwrap();
    (Rc::new(seated), driver)
}

fn valid_call() -> Value {
    json!({"id": "c1", "tool": "files.read", "arguments": {}, "traceId": "t", "requestedAt": "2026-08-18T09:00:00.000Z"})
}

#[test]
fn d1_values_that_are_not_decisions_are_refused() {
    let invalid = [
        json!(null),
        json!("complete"),
        json!([{"type": "complete", "output": 1}]),
        json!({"output": 1}),
        json!({"type": "finish", "output": 1}),
        json!({"type": "complete", "output": 1, "extra": true}),
        json!({"type": "complete"}),
        json!({"type": "complete", "output": 1, "metadata": []}),
        json!({"type": "complete", "output": 1, "metadata": null}),
        json!({"type": "fail", "error": {"code": "x"}}),
        json!({"type": "fail", "error": {"code": "x", "message": "m", "extra": 1}}),
        json!({"type": "fail", "error": {"code": " x", "message": "m"}}),
        json!({"type": "tool_call"}),
        json!({"type": "tool_call", "call": {"id": "c1", "tool": "files.read", "arguments": {}, "traceId": "t"}}),
        json!({"type": "tool_call", "call": {"id": "c1", "tool": "files.read", "arguments": [], "traceId": "t", "requestedAt": "2026-08-18T09:00:00.000Z"}}),
        json!({"type": "tool_call", "call": {"id": "", "tool": "files.read", "arguments": {}, "traceId": "t", "requestedAt": "2026-08-18T09:00:00.000Z"}}),
        json!({"type": "tool_call", "call": {"id": "c1", "tool": "files.read", "arguments": {}, "traceId": "t", "requestedAt": "yesterday"}}),
        json!({"type": "tool_call", "call": valid_call(), "step": -1}),
        json!({"type": "tool_call", "call": valid_call(), "step": 1.5}),
        json!({"type": "tool_call", "call": valid_call(), "step": "2"}),
        json!({"type": "tool_call", "call": valid_call(), "step": null}),
        json!({"type": "tool_call", "call": valid_call(), "metadata": {}}),
        json!({"type": "escalate"}),
        json!({"type": "escalate", "reason": 7}),
    ];
    for value in invalid {
        assert!(AgentTurnDecision::parse(&value).is_err(), "accepted {value}");
    }
}

#[test]
fn d1_well_formed_decisions_parse_and_round_trip() {
    let valid = [
        json!({"type": "complete", "output": null}),
        json!({"type": "complete", "output": {"text": "hi"}, "metadata": {"k": 1}}),
        json!({"type": "fail", "error": {"code": "x", "message": "m", "retryable": true}}),
        json!({"type": "escalate", "reason": "why", "metadata": {}}),
        json!({"type": "tool_call", "call": valid_call()}),
        json!({"type": "tool_call", "call": valid_call(), "step": 0}),
    ];
    for value in valid {
        let decision = AgentTurnDecision::parse(&value).unwrap();
        assert_eq!(decision.to_value(), value);
    }
    let integral = AgentTurnDecision::parse(&json!({"type": "tool_call", "call": valid_call(), "step": 3.0})).unwrap();
    assert!(matches!(integral, AgentTurnDecision::ToolCall { step: Some(3), .. }));
}

#[tokio::test(start_paused = true)]
async fn d1_an_invalid_decision_fails_the_turn_and_invokes_nothing() {
    let world = World::baseline();
    let (seated, driver) =
        seat(ScriptDriver::replies(vec![Reply::Now(json!({"type": "complete", "output": 1, "x": 2}))]));
    let result = world.run(seated).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("invalid_driver_decision".into()), None));
    assert_eq!(
        events_of(&result, "turn.failed"),
        vec![json!({"code": "invalid_driver_decision", "source": "runtime"})]
    );
    assert!(events_of(&result, "tool.requested").is_empty());
    assert_eq!(driver.log.nexts(), 1);
}

#[test]
fn d2_escalation_reasons_are_checked_strictly_and_trimmed() {
    let parse = |reason: &str| AgentTurnDecision::parse(&json!({"type": "escalate", "reason": reason}));
    assert!(parse("   \n ").is_err());
    assert!(parse("").is_err());
    assert!(parse(&"r".repeat(513)).is_err(), "an overlong reason is refused, not cut");
    assert!(parse(&format!("  {}  ", "r".repeat(512))).is_ok());
    // 300 astral characters are 600 UTF-16 units: over the bound.
    assert!(parse(&"😀".repeat(300)).is_err());
    let trimmed = parse("  needs approval \t").unwrap();
    assert_eq!(trimmed, AgentTurnDecision::Escalate { reason: "needs approval".into(), metadata: None });
}

#[tokio::test(start_paused = true)]
async fn d2_the_trimmed_reason_is_what_the_turn_escalates_with() {
    let world = World::baseline();
    let (seated, _) = seat(ScriptDriver::replies(vec![Reply::Now(escalate("  ask the owner  "))]));
    let result = world.run(seated).await;
    assert_eq!(result.status, ExecutionStatus::Escalated);
    assert_eq!(result.escalation.unwrap().reason, "ask the owner");
    let (seated, _) = seat(ScriptDriver::replies(vec![Reply::Now(escalate(&"r".repeat(513)))]));
    let refused = world.run(seated).await;
    assert_eq!(refused.code(), Some("invalid_driver_decision"));
}

#[tokio::test(start_paused = true)]
async fn d3_next_is_called_at_most_max_steps_times() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::new(|i, _, request| {
        Reply::Now(call(request, &format!("c{i}"), "files.read", read_policy(), None))
    }));
    let result = world.run_with(seated, world.request(Some(3), None), 0).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("step_limit_exceeded".into()), None));
    assert_eq!(driver.log.nexts(), 3);
    let steps: Vec<Value> = events_of(&result, "tool.requested").iter().map(|d| d["step"].clone()).collect();
    assert_eq!(steps, vec![json!(0), json!(1), json!(2)]);
    assert_eq!(world.invoked(), vec!["succeeded"; 3]);
}

#[tokio::test(start_paused = true)]
async fn d4_a_declared_step_replaces_the_loop_index() {
    let world = World::baseline();
    let (seated, _) = seat(ScriptDriver::new(|i, _, request| match i {
        0 => Reply::Now(call(request, "c0", "files.read", read_policy(), Some(json!(5)))),
        _ => Reply::Now(complete(json!("done"))),
    }));
    let result = world.run(seated).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(events_of(&result, "tool.requested")[0]["step"], json!(5));
}

#[tokio::test(start_paused = true)]
async fn d4_a_declared_step_behind_the_loop_fails_without_invoking() {
    let world = World::baseline();
    let (seated, _) = seat(ScriptDriver::new(|i, _, request| {
        Reply::Now(call(request, &format!("c{i}"), "files.read", read_policy(), Some(json!(0))))
    }));
    let result = world.run(seated).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("invalid_driver_decision".into()), None));
    assert_eq!(events_of(&result, "tool.requested").len(), 1, "only the call at loop step 0 was invoked");
}

#[tokio::test(start_paused = true)]
async fn d5_a_step_at_max_steps_is_denied_and_the_turn_continues() {
    let world = World::baseline();
    let (seated, driver) = seat(ScriptDriver::new(|i, _, request| match i {
        0 => Reply::Now(call(request, "over", "files.read", read_policy(), Some(json!(2)))),
        _ => Reply::Now(complete(json!("after the denial"))),
    }));
    let result = world.run_with(seated, world.request(Some(2), None), 0).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    let completed = events_of(&result, "tool.completed");
    assert_eq!(
        (completed[0]["status"].clone(), completed[0]["code"].clone()),
        (json!("denied"), json!("step_limit_exceeded"))
    );
    let inputs = driver.log.inputs.borrow();
    let AgentTurnInput::ToolResult { result: handed } = &inputs[1] else { panic!("no result handed back") };
    assert_eq!(handed.status(), ToolStatus::Denied);
    assert_eq!(handed.error().unwrap().code, "step_limit_exceeded");
    assert_eq!(world.invoked(), vec!["denied"], "the refusal is audited; nothing ran");
}

#[tokio::test(start_paused = true)]
async fn d6_a_seen_step_is_admitted_again_and_distinct_steps_stay_within_max_steps() {
    let world = World::baseline();
    let (seated, _) = seat(ScriptDriver::new(|i, _, request| match i {
        0 | 1 => Reply::Now(call(request, &format!("c{i}"), "files.read", read_policy(), Some(json!(1)))),
        2 => Reply::Now(call(request, "c2", "files.read", read_policy(), Some(json!(3)))),
        _ => Reply::Now(complete(json!("done"))),
    }));
    let result = world.run_with(seated, world.request(Some(3), None), 0).await;
    assert_eq!(result.status, ExecutionStatus::Failed, "the loop's own budget of 3 steps ends the turn");
    let statuses: Vec<(Value, Value)> =
        events_of(&result, "tool.completed").iter().map(|d| (d["status"].clone(), d["step"].clone())).collect();
    assert_eq!(
        statuses,
        vec![(json!("succeeded"), json!(1)), (json!("succeeded"), json!(1)), (json!("denied"), json!(3))],
        "step 1 twice is one step; step 3 is past the budget"
    );
}

#[tokio::test(start_paused = true)]
async fn d9_a_throwing_session_fails_driver_failed_retryable_and_reports_only_to_the_sink() {
    let world = World::baseline();
    let caught: Rc<RefCell<Vec<LoopError>>> = Rc::default();
    let sink = caught.clone();
    let options = StandardLoopOptions {
        on_turn_error: Some(Rc::new(move |e: &LoopError| sink.borrow_mut().push(e.clone()))),
        ..StandardLoopOptions::default()
    };
    let seated = StandardLoop::new(ScriptDriver::replies(vec![Reply::Throw]), options).unwrap();
    let result = world.run(Rc::new(seated)).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("driver_failed".into()), Some(true)));
    let message = &result.error.as_ref().unwrap().message;
    assert!(!message.contains("scripted"), "the thrown message is not exposed: {message}");
    assert_eq!(caught.borrow().len(), 1);
    assert!(caught.borrow()[0].to_string().contains("scripted session throws"));
    assert_eq!(events_of(&result, "turn.failed"), vec![json!({"code": "driver_failed", "source": "runtime"})]);
}

#[tokio::test(start_paused = true)]
async fn d9_a_throwing_open_is_contained_the_same_way() {
    let world = World::baseline();
    let mut driver = ScriptDriver::replies(vec![]);
    driver.open_throws = true;
    let (seated, driver) = seat(driver);
    let result = world.run(seated).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("driver_failed".into()), Some(true)));
    assert_eq!(driver.log.nexts(), 0);
}
