//! Whole turns over a live CLI: the envelope's executor over the reference
//! kernel world, the standard loop, the eval driver, a vendor protocol and
//! the child-process transport, talking to the stand-in CLI over stdio.
//!
//! Each test runs on a current-thread runtime with I/O and time enabled
//! and a real clock, since a live process cannot run on a paused one.
//! Bounds are short, every wait has a generous hang guard, and no test
//! asserts how long anything took.

use crate::support;

use serde_json::{json, Value};
use sharedos_drivers::child_process::{ChannelEnd, ChildProcessTransport, ProcessDiagnostics};
use sharedos_drivers::eval_driver::{codes, EvalHarnessDriver, EvalHarnessDriverOptions};
use sharedos_drivers::frame::{HarnessFrame, HarnessStep, HarnessTurnRequest};
use sharedos_drivers::protocol::HarnessProtocol;
use sharedos_drivers::standard_loop::{StandardLoop, StandardLoopOptions};
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_envelope::options::ExecuteOptions;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{ExecutionOptions, ExecutionRequest, ExecutionResult, ExecutionStatus};
use sharedos_model::tool::{ToolDefinition, ToolResult};
use sharedos_testkit::events::events_of;
use sharedos_testkit::json::object;
use sharedos_testkit::world::{World, EXECUTION_ID};
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use support::{standin, stream, HANG_GUARD};

/// The turn limit of turns expected to end on their own; far beyond what
/// they need, and well inside the hang guard.
const TURN_TIMEOUT_MS: u64 = 10_000;

/// The turn limit of the turn whose CLI hangs.
const SHORT_TURN_TIMEOUT_MS: u64 = 300;

/// The code the kernel denies a write to the read-only policy file with.
const NO_MATCHING_GRANT: &str = "no_matching_grant";

/// Runs `future` on a current-thread runtime with I/O and a real clock.
fn on_a_live_runtime<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime").block_on(future)
}

async fn guarded<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(HANG_GUARD, future).await.expect("the turn hung")
}

/// The one opening line: the whole turn request, as the CLI is first told it.
fn opening(request: &HarnessTurnRequest) -> Vec<HarnessFrame> {
    vec![object(json!({"type": "sharedos.turn", "request": request}))]
}

/// The world's turn request under a turn limit of `timeout_ms`.
fn request(world: &World, timeout_ms: u64) -> ExecutionRequest {
    world.request(Some(ExecutionOptions { max_steps: None, max_tool_calls: None, timeout_ms: Some(timeout_ms) }))
}

/// A vendor protocol that keeps every frame the driver read, so a test
/// can see the stand-in's echoes of what it received on stdin.
struct Recording {
    inner: Box<dyn HarnessProtocol>,
    frames: RefCell<Vec<HarnessFrame>>,
}

impl Recording {
    fn of(vendor: Vendor) -> Rc<Recording> {
        Rc::new(Recording { inner: vendor.protocol(), frames: RefCell::default() })
    }

    /// Every line the stand-in reported reading from stdin, in order.
    fn received(&self) -> Vec<Value> {
        self.frames
            .borrow()
            .iter()
            .filter(|frame| frame.get("standin") == Some(&json!("received")))
            .map(|frame| frame["line"].clone())
            .collect()
    }

    /// Every frame the stand-in wrote about itself (not a reading of stdin).
    fn reports(&self, kind: &str) -> Vec<HarnessFrame> {
        self.frames.borrow().iter().filter(|frame| frame.get("standin") == Some(&json!(kind))).cloned().collect()
    }
}

impl HarnessProtocol for Recording {
    fn id(&self) -> &'static str {
        self.inner.id()
    }

    fn describe_tools(&self, tools: &[Arc<ToolDefinition>]) -> Value {
        self.inner.describe_tools(tools)
    }

    fn interpret(&self, frame: &HarnessFrame) -> Vec<HarnessStep> {
        self.frames.borrow_mut().push(frame.clone());
        self.inner.interpret(frame)
    }

    fn encode_tool_result(&self, result: &ToolResult) -> HarnessFrame {
        self.inner.encode_tool_result(result)
    }
}

/// One turn's evidence.
struct LiveTurn {
    result: ExecutionResult,
    transport: ChildProcessTransport,
    protocol: Rc<Recording>,
}

impl LiveTurn {
    /// The only process the turn started.
    fn process(&self) -> ProcessDiagnostics {
        let mut all = self.transport.diagnostics();
        assert_eq!(all.len(), 1, "one process per turn");
        all.remove(0)
    }

    /// `(callId, tool, status, code)` of every `tool.completed` event.
    fn completed(&self) -> Vec<(String, String, String, Option<String>)> {
        self.events("tool.completed")
            .iter()
            .map(|data| {
                let text = |key: &str| data[key].as_str().unwrap_or_default().to_string();
                (text("callId"), text("tool"), text("status"), data["code"].as_str().map(str::to_string))
            })
            .collect()
    }

    fn requested(&self) -> Vec<String> {
        self.events("tool.requested").iter().map(|data| data["callId"].as_str().unwrap().to_string()).collect()
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        events_of(&self.result, kind)
    }
}

/// Runs one turn of `vendor` with the stand-in started with `args`.
async fn live_turn(world: &World, vendor: Vendor, args: &[&str], timeout_ms: u64) -> LiveTurn {
    let transport = ChildProcessTransport::new(standin(args)).with_opening(opening);
    let protocol = Recording::of(vendor);
    let options = EvalHarnessDriverOptions::new(vendor.manifest(), protocol.clone(), Rc::new(transport.clone()));
    let driver = EvalHarnessDriver::new(options).unwrap();
    let seated = StandardLoop::new(driver, StandardLoopOptions::default()).unwrap();
    let executor = world.executor(Rc::new(seated), 0);
    let result = guarded(executor.execute(request(world, timeout_ms), ExecuteOptions::default())).await.unwrap();
    LiveTurn { result, transport, protocol }
}

/// The state letter of a process, `None` once it is gone entirely.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next())
}

/// Waits until `pid` has been reaped (a zombie would keep it present).
async fn until_gone(pid: u32) {
    guarded(async {
        while process_state(pid).is_some() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// Waits until `pid` no longer runs: gone, or a zombie left for a parent
/// that is not ours to reap.
async fn until_not_running(pid: u32) -> Option<char> {
    guarded(async {
        loop {
            match process_state(pid) {
                None | Some('Z' | 'X') => return process_state(pid),
                Some(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    })
    .await
}

/// The `{status, ...}` body a result line carries, per vendor shape.
fn result_body(vendor: Vendor, line: &Value) -> (String, Value) {
    let (call_id, text) = match vendor {
        Vendor::Codex => {
            assert_eq!(line["type"], "function_call_output", "{line}");
            (&line["call_id"], &line["output"])
        }
        Vendor::ClaudeCode => {
            assert_eq!(line["type"], "user", "{line}");
            let block = &line["message"]["content"][0];
            assert_eq!(block["type"], "tool_result", "{line}");
            (&block["tool_use_id"], &block["content"][0]["text"])
        }
        other => panic!("no result shape for {}", other.id()),
    };
    (call_id.as_str().unwrap().to_string(), serde_json::from_str(text.as_str().unwrap()).unwrap())
}

/// The shared body of the two mediated-turn tests: the stand-in asks for a
/// read the grants allow, then (after its result) a write the kernel
/// denies, then (after that result) completes.
async fn a_live_turn_is_mediated_call_by_call(vendor: Vendor, stream_file: &str, calls: [&str; 2]) {
    let world = World::baseline();
    let path = stream(stream_file);
    let turn = live_turn(&world, vendor, &["--answer", "--echo-stdin", &path], TURN_TIMEOUT_MS).await;
    let [read, replace] = calls.map(str::to_string);

    assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "{:?}", turn.result.error);
    assert_eq!(turn.result.output, Some(json!({"text": "The policy keeps records for 90 days."})));
    let runtime = turn.result.metadata.as_ref().unwrap()["runtime"]["id"].clone();
    assert_eq!(runtime, json!(format!("sharedos.{}", vendor.id())));

    // Both calls were mediated by the envelope and judged by the kernel.
    assert_eq!(turn.requested(), vec![read.clone(), replace.clone()]);
    assert_eq!(
        turn.completed(),
        vec![
            (read.clone(), "files.read".into(), "succeeded".into(), None),
            (replace.clone(), "files.replace".into(), "denied".into(), Some(NO_MATCHING_GRANT.into())),
        ]
    );
    assert_eq!(world.invoked(), vec!["succeeded", "denied"], "the kernel audited both, in order");

    // The stand-in read the opening line and exactly two result lines.
    let received = turn.protocol.received();
    assert_eq!(received.len(), 3, "{received:?}");
    assert_eq!(received[0]["type"], "sharedos.turn");
    assert_eq!(received[0]["request"]["prompt"], "Read the policy file.");
    assert_eq!(received[0]["request"]["executionId"], EXECUTION_ID);
    let (first_id, first) = result_body(vendor, &received[1]);
    assert_eq!((first_id, first["status"].clone()), (read, json!("succeeded")));
    let (second_id, second) = result_body(vendor, &received[2]);
    assert_eq!(
        (second_id, second["status"].clone(), second["error"]["code"].clone()),
        (replace, json!("denied"), json!(NO_MATCHING_GRANT))
    );

    // The turn ends on the stand-in's last frame, which may come before
    // its exit is reaped.
    let process = guarded(async {
        loop {
            let process = turn.process();
            if process.exit.is_some() {
                return process;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_eq!(process.writes, 3, "the opening frame and two results");
    // It exits on its own after its last batch, unless the turn's end
    // (which does not wait for that) killed it first: never with an error.
    let exit = process.exit.unwrap();
    let killed = [Some(libc_signal::TERM), Some(libc_signal::KILL)].contains(&exit.signal);
    assert!(exit.code == Some(0) || killed, "it ended on its own or at the turn's end: {exit:?}");
    until_gone(process.pid.unwrap()).await;
}

#[test]
fn a_live_codex_turn_is_mediated_call_by_call_over_stdio() {
    on_a_live_runtime(a_live_turn_is_mediated_call_by_call(
        Vendor::Codex,
        "live-codex.jsonl",
        ["call-read", "call-replace"],
    ));
}

#[test]
fn a_live_claude_code_turn_is_mediated_call_by_call_over_stdio() {
    on_a_live_runtime(a_live_turn_is_mediated_call_by_call(
        Vendor::ClaudeCode,
        "live-claude-code.jsonl",
        ["toolu-read", "toolu-replace"],
    ));
}

#[test]
fn a_live_cli_that_exits_mid_turn_fails_the_turn_and_leaves_no_zombie() {
    on_a_live_runtime(async {
        let world = World::baseline();
        let path = stream("live-exit.jsonl");
        let turn = live_turn(&world, Vendor::Codex, &["--answer", "--exit-mid-turn", &path], TURN_TIMEOUT_MS).await;

        assert_eq!(turn.result.status, ExecutionStatus::Failed);
        // Which of the two codes surfaces (D22 or D9) depends on timing.
        let code = turn.result.code().unwrap_or_default();
        let accepted = [codes::HARNESS_ENDED_WITHOUT_OUTCOME, ReasonCode::DriverFailed.as_str()];
        assert!(accepted.contains(&code), "{code}");
        assert_eq!(turn.completed().len(), 1, "the call before the exit was still mediated");
        assert_eq!(turn.completed()[0].2, "succeeded");

        let process = turn.process();
        let exit = process.exit.expect("the child was reaped");
        assert_eq!((exit.code, exit.signal), (Some(3), None), "it exited on its own, mid-turn");
        assert!(matches!(process.end, Some(ChannelEnd::OutputClosed | ChannelEnd::Exited)), "{:?}", process.end);
        until_gone(process.pid.unwrap()).await;
    });
}

#[test]
fn a_live_cli_that_hangs_is_cancelled_at_the_turn_deadline_and_its_process_group_killed() {
    on_a_live_runtime(async {
        let world = World::baseline();
        let path = stream("live-hang.jsonl");
        let args = ["--answer", "--spawn-grandchild", "--hang", &path];
        let turn = live_turn(&world, Vendor::ClaudeCode, &args, SHORT_TURN_TIMEOUT_MS).await;

        assert_eq!(turn.result.status, ExecutionStatus::Cancelled, "{:?}", turn.result.error);
        assert_eq!(turn.result.code(), Some(ReasonCode::TurnCancelled.as_str()));
        assert_eq!(turn.events("turn.cancelled").len(), 1);
        assert_eq!(turn.completed().len(), 1, "the call before the hang was mediated");

        let grandchild = turn.protocol.reports("grandchild");
        assert_eq!(grandchild.len(), 1, "the stand-in started a grandchild in its group");
        let grandchild = u32::try_from(grandchild[0]["pid"].as_u64().unwrap()).unwrap();
        let pid = turn.process().pid.unwrap();
        until_gone(pid).await;
        let state = until_not_running(grandchild).await;
        assert!(state.is_none() || state == Some('Z'), "the grandchild was killed with its group");

        let process = turn.process();
        assert!(matches!(process.end, Some(ChannelEnd::Aborted | ChannelEnd::Closed)), "{:?}", process.end);
        let exit = process.exit.expect("the child was reaped");
        assert!(exit.code.is_none() && exit.signal.is_some(), "it was killed, not exited: {exit:?}");
    });
}

/// The signal numbers a turn's end sends (Linux).
mod libc_signal {
    pub const TERM: i32 = 15;
    pub const KILL: i32 = 9;
}
