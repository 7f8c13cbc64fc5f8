//! The eval-harness driver in the standard loop, over a batch
//! transport with transcript semantics and a protocol whose frames spell
//! their steps out (D13, D16–D23).

use crate::support;

use serde_json::{json, Value};
use sharedos_drivers::eval_driver::{
    EvalDriverError, EvalHarnessDriver, EvalHarnessDriverOptions, DEFAULT_MAX_IGNORED_FRAMES,
};
use sharedos_drivers::frame::{HarnessFrame, HarnessStep};
use sharedos_drivers::protocol::HarnessProtocol;
use sharedos_drivers::seat::{prompt_hash, Instructions, DEFAULT_ESCALATION_REASON};
use sharedos_drivers::standard_loop::{StandardLoop, StandardLoopOptions};
use sharedos_drivers::vendor::VendorWire;
use sharedos_model::execution::{ExecutionResult, ExecutionStatus, RuntimeManifest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::tool::ProtocolError;
use sharedos_testkit::events::events_of;
use sharedos_testkit::json::object;
use sharedos_testkit::world::EXECUTION_ID;
use std::rc::Rc;
use std::sync::Arc;
use support::harness::{frame, noise, prose, tool_step, BatchTransport, StepsProtocol};
use support::{ending, meta, World};

fn manifest() -> RuntimeManifest {
    RuntimeManifest {
        id: "test.harness".into(),
        version: "0.0.1".into(),
        protocol_version: PROTOCOL_VERSION.into(),
        metadata: None,
    }
}

fn driver_options(transport: &Rc<BatchTransport>) -> EvalHarnessDriverOptions {
    EvalHarnessDriverOptions::new(manifest(), Rc::new(StepsProtocol), transport.clone())
}

async fn run(
    world: &World,
    batches: Vec<Vec<HarnessFrame>>,
    edit: impl FnOnce(&mut EvalHarnessDriverOptions),
) -> (ExecutionResult, Rc<BatchTransport>) {
    let transport = BatchTransport::new(batches);
    let mut options = driver_options(&transport);
    edit(&mut options);
    let driver = EvalHarnessDriver::new(options).unwrap();
    let seated = StandardLoop::new(driver, StandardLoopOptions::default()).unwrap();
    (world.run(Rc::new(seated)).await, transport)
}

fn read_call(id: &str) -> HarnessStep {
    tool_step(id, "files.read", json!({"path": ["Workspace", "policy.md"]}))
}

fn done() -> HarnessStep {
    HarnessStep::bare_complete()
}

fn requested(result: &ExecutionResult) -> Vec<(Value, Value)> {
    events_of(result, "tool.requested").iter().map(|d| (d["callId"].clone(), d["step"].clone())).collect()
}

#[test]
fn d17_max_ignored_frames_defaults_to_512_and_must_be_positive() {
    let transport = BatchTransport::new(vec![vec![]]);
    let driver = EvalHarnessDriver::new(driver_options(&transport)).unwrap();
    assert_eq!((driver.max_ignored_frames(), DEFAULT_MAX_IGNORED_FRAMES), (512, 512));
    let mut zero = driver_options(&transport);
    zero.max_ignored_frames = Some(0);
    assert_eq!(EvalHarnessDriver::new(zero).err(), Some(EvalDriverError::InvalidMaxIgnoredFrames));
}

#[tokio::test(start_paused = true)]
async fn d18_the_seat_is_hashed_before_the_transport_opens_and_the_turn_request_is_rendered() {
    let world = World::baseline();
    let transport = BatchTransport::new(vec![vec![frame(vec![done()])]]);
    let mut options = driver_options(&transport);
    let order = transport.seen.clone();
    options.seat.instructions = Some(Instructions::Compose(Rc::new(move |_| {
        order.order.borrow_mut().push("seat");
        Some("Follow the list.".into())
    })));
    let seated = StandardLoop::new(EvalHarnessDriver::new(options).unwrap(), StandardLoopOptions::default()).unwrap();
    let result = world.run(Rc::new(seated)).await;
    assert_eq!(transport.seen.order.borrow()[..2], ["seat", "open"]);
    let opened = transport.seen.opened.borrow()[0].clone();
    assert_eq!(opened.execution_id, EXECUTION_ID);
    assert_eq!(opened.prompt, "Read the policy file.");
    assert_eq!(opened.instructions.as_deref(), Some("Follow the list."));
    let visible = events_of(&result, "turn.started")[0]["visibleTools"].clone();
    let effective: Vec<_> = world
        .requested_tools
        .iter()
        .filter(|t| visible.as_array().unwrap().contains(&json!(t.name)))
        .cloned()
        .map(Arc::new)
        .collect();
    assert_eq!(*opened.tools, StepsProtocol.describe_tools(&effective), "the permission-filtered catalogue only");
    assert!(!visible.as_array().unwrap().contains(&json!("admin.grant.issue")));
    assert_eq!(opened.context.trace_id, world.request(None, None).context.trace_id);
    assert_eq!(opened.metadata, None);
    let hash = prompt_hash(opened.instructions.as_deref(), &opened.prompt).unwrap();
    assert_eq!(meta(&result, "promptHash"), Some(json!(hash)));
}

#[tokio::test(start_paused = true)]
async fn d18_instructions_are_left_out_when_there_are_none() {
    let world = World::baseline();
    let (_, transport) = run(&world, vec![vec![frame(vec![done()])]], |o| {
        o.seat.instructions = Some(Instructions::Compose(Rc::new(|_| None)));
    })
    .await;
    let opened = serde_json::to_value(&transport.seen.opened.borrow()[0]).unwrap();
    assert!(opened.get("instructions").is_none());
}

#[tokio::test(start_paused = true)]
async fn d19_a_tool_result_is_written_as_exactly_one_frame_before_reading() {
    let world = World::baseline();
    let (result, transport) =
        run(&world, vec![vec![frame(vec![read_call("c1")])], vec![frame(vec![done()])]], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(*transport.seen.order.borrow(), vec!["open", "read", "write", "read", "close"]);
    let written = transport.seen.written.borrow();
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["callId"], json!("c1"));
    assert_eq!(written[0]["result"]["status"], json!("succeeded"));
}

#[tokio::test(start_paused = true)]
async fn d20_calls_in_one_frame_are_released_one_per_next_in_frame_order() {
    let world = World::baseline();
    let first = frame(vec![prose("thinking"), read_call("a"), read_call("b")]);
    let (result, transport) = run(&world, vec![vec![first], vec![frame(vec![done()])]], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(requested(&result), vec![(json!("a"), json!(0)), (json!("b"), json!(1))]);
    assert_eq!(transport.seen.reads.get(), 2, "the second call came from the pending queue, not a new read");
    assert_eq!(result.output, Some(json!({"text": "thinking"})), "prose before a call is kept");
}

#[tokio::test(start_paused = true)]
async fn d21_a_bare_completion_outputs_all_prose_of_the_session() {
    let world = World::baseline();
    let batches = vec![
        vec![frame(vec![prose("one")]), frame(vec![prose("two"), read_call("a")])],
        vec![frame(vec![prose("three")]), frame(vec![done()])],
    ];
    let (result, _) = run(&world, batches, |_| {}).await;
    assert_eq!(result.output, Some(json!({"text": "one\ntwo\nthree"})));
}

#[tokio::test(start_paused = true)]
async fn d21_a_completion_with_output_is_used_as_is_with_its_metadata() {
    let world = World::baseline();
    let complete = HarnessStep::Complete {
        output: Some(json!({"transcript": "x"})),
        metadata: Some(object(json!({"harnessNote": "kept"}))),
    };
    let (result, _) = run(&world, vec![vec![frame(vec![prose("ignored"), complete])]], |_| {}).await;
    assert_eq!(result.output, Some(json!({"transcript": "x"})));
    assert_eq!(meta(&result, "harnessNote"), Some(json!("kept")));
}

#[tokio::test(start_paused = true)]
async fn d22_a_channel_that_ends_before_a_decision_fails_harness_ended_without_outcome() {
    let world = World::baseline();
    let (silent, _) = run(&world, vec![vec![frame(vec![prose("just talk")])]], |_| {}).await;
    assert_eq!(ending(&silent), (ExecutionStatus::Failed, Some("harness_ended_without_outcome".into()), None));
    let (after_result, transport) = run(&world, vec![vec![frame(vec![read_call("a")])]], |_| {}).await;
    assert_eq!(after_result.code(), Some("harness_ended_without_outcome"));
    assert_eq!(transport.seen.written.borrow().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn d23_more_than_max_ignored_frames_in_one_next_fail_and_the_last_frame_is_never_examined() {
    let world = World::baseline();
    let batches = vec![vec![noise(), noise(), noise(), frame(vec![done()])]];
    let (result, transport) = run(&world, batches, |o| o.max_ignored_frames = Some(3)).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("harness_frame_limit_exceeded".into()), None));
    assert_eq!(transport.seen.reads.get(), 4, "max + 1 frames are read");
    let within = vec![vec![noise(), noise(), frame(vec![done()])]];
    let (result, _) = run(&world, within, |o| o.max_ignored_frames = Some(3)).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
}

#[tokio::test(start_paused = true)]
async fn d23_the_frame_counter_is_per_next() {
    let world = World::baseline();
    let batches =
        vec![vec![noise(), noise(), frame(vec![read_call("a")])], vec![noise(), noise(), frame(vec![done()])]];
    let (result, transport) = run(&world, batches, |o| o.max_ignored_frames = Some(3)).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(transport.seen.reads.get(), 6);
}

#[tokio::test(start_paused = true)]
async fn d13_eval_the_affordance_escalates_only_when_offered() {
    let world = World::baseline();
    let ask = tool_step("e", "sharedos.escalate", json!({"reason": "  owner decides  "}));
    let (result, _) = run(&world, vec![vec![frame(vec![ask.clone(), read_call("a")])]], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Escalated);
    assert_eq!(result.escalation.as_ref().unwrap().reason, "owner decides");
    assert!(requested(&result).is_empty(), "everything after the ask is dropped");
    let blank = tool_step("e", "sharedos.escalate", json!({"reason": 5}));
    let (result, _) = run(&world, vec![vec![frame(vec![blank])]], |_| {}).await;
    assert_eq!(result.escalation.unwrap().reason, DEFAULT_ESCALATION_REASON);
    let withheld = World::without_escalation();
    let (result, _) = run(&withheld, vec![vec![frame(vec![ask])], vec![frame(vec![done()])]], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert_eq!(events_of(&result, "tool.completed")[0]["code"], json!("tool_unavailable"));
}

#[tokio::test(start_paused = true)]
async fn d16_eval_names_are_never_filtered_and_calls_carry_the_turns_trace() {
    let world = World::baseline();
    let invented = tool_step("x", "admin.grant.issue", json!({}));
    let batches = vec![vec![frame(vec![invented, read_call("r")])], vec![], vec![frame(vec![done()])]];
    let (result, _) = run(&world, batches, |_| {}).await;
    let completed = events_of(&result, "tool.completed");
    assert_eq!(
        (completed[0]["tool"].clone(), completed[0]["code"].clone()),
        (json!("admin.grant.issue"), json!("tool_unavailable"))
    );
    assert_eq!(completed[1]["status"], json!("succeeded"), "a call stamped with another trace would be refused");
}

#[tokio::test(start_paused = true)]
async fn a_failed_step_fails_the_turn_with_the_harness_error() {
    let world = World::baseline();
    let mut error = ProtocolError::new("harness_failed", "the CLI gave up");
    error.retryable = Some(true);
    let (result, _) = run(&world, vec![vec![frame(vec![HarnessStep::Failed { error }])]], |_| {}).await;
    assert_eq!(ending(&result), (ExecutionStatus::Failed, Some("harness_failed".into()), Some(true)));
}

#[tokio::test(start_paused = true)]
async fn steps_after_a_terminal_step_are_never_consumed_and_close_closes_the_channel() {
    let world = World::baseline();
    let (result, transport) = run(&world, vec![vec![frame(vec![done(), read_call("late")])]], |_| {}).await;
    assert_eq!(result.status, ExecutionStatus::Succeeded);
    assert!(requested(&result).is_empty());
    assert_eq!(transport.seen.closes.get(), 1);
}

#[tokio::test(start_paused = true)]
async fn d15_eval_declare_step_sees_release_indices() {
    let world = World::baseline();
    let batches = vec![vec![frame(vec![read_call("a"), read_call("b")])], vec![], vec![frame(vec![done()])]];
    let (result, _) =
        run(&world, batches, |o| o.declare_step = Some(Rc::new(|index, _| (index == 1).then_some(6)))).await;
    assert_eq!(requested(&result), vec![(json!("a"), json!(0)), (json!("b"), json!(6))]);
}

#[tokio::test(start_paused = true)]
async fn every_vendor_column_runs_a_written_transcript_through_the_loop() {
    use sharedos_drivers::transcript::TranscriptTransport;
    use sharedos_drivers::vendor::Vendor;
    for vendor in Vendor::ALL {
        let world = World::baseline();
        let writer = vendor.writer();
        let protocol: Rc<dyn HarnessProtocol> = Rc::from(vendor.protocol());
        assert_eq!(writer.protocol_id(), protocol.id());
        let arguments = object(json!({"path": ["Workspace", "policy.md"]}));
        let batches = vec![
            vec![writer.tool_call("call-1", "files.read", &arguments)],
            vec![writer.complete(Some(&json!({"transcript": EXECUTION_ID})))],
        ];
        let transport = Rc::new(TranscriptTransport::from_frames(batches).unwrap());
        let options = EvalHarnessDriverOptions::new(vendor.manifest(), protocol, transport.clone());
        let seated =
            StandardLoop::new(EvalHarnessDriver::new(options).unwrap(), StandardLoopOptions::default()).unwrap();
        let result = world.run(Rc::new(seated)).await;
        assert_eq!(result.status, ExecutionStatus::Succeeded, "{}", vendor.id());
        assert_eq!(meta(&result, "runtime").unwrap()["id"], json!(format!("sharedos.{}", vendor.id())));
        let completed = events_of(&result, "tool.completed");
        assert_eq!((completed.len(), completed[0]["status"].clone()), (1, json!("succeeded")), "{}", vendor.id());
        assert_eq!(transport.written().len(), 1, "{}", vendor.id());
        assert_eq!(transport.opened().len(), 1);
    }
}
