//! A trivial protocol whose frames spell their steps out, and a transport
//! over batches of frames with transcript semantics (batch k+1 unlocks
//! after k results are written).

use futures::future::LocalBoxFuture;
use serde_json::{json, Value};
use sharedos_drivers::frame::{HarnessFrame, HarnessStep, HarnessTurnRequest};
use sharedos_drivers::protocol::HarnessProtocol;
use sharedos_drivers::transport::{HarnessChannel, HarnessTransport, TransportError};
use sharedos_drivers::wire::tool_result_body;
use sharedos_model::tool::{ToolDefinition, ToolResult};
use sharedos_port::signal::AbortSignal;
use sharedos_testkit::json::object;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

/// Frames are `{steps: [HarnessStep...]}`; anything else means nothing.
pub struct StepsProtocol;

/// The protocol id.
pub const STEPS_PROTOCOL: &str = "test.steps";

impl HarnessProtocol for StepsProtocol {
    fn id(&self) -> &'static str {
        STEPS_PROTOCOL
    }

    fn describe_tools(&self, tools: &[Arc<ToolDefinition>]) -> Value {
        Value::Array(tools.iter().map(|t| json!({"name": t.name})).collect())
    }

    fn interpret(&self, frame: &HarnessFrame) -> Vec<HarnessStep> {
        frame
            .get("steps")
            .and_then(Value::as_array)
            .map(|steps| steps.iter().filter_map(|s| serde_json::from_value(s.clone()).ok()).collect())
            .unwrap_or_default()
    }

    fn encode_tool_result(&self, result: &ToolResult) -> HarnessFrame {
        object(json!({"result": tool_result_body(result), "callId": result.call_id}))
    }
}

/// One frame holding `steps`.
pub fn frame(steps: Vec<HarnessStep>) -> HarnessFrame {
    object(json!({"steps": steps}))
}

/// A frame that means nothing.
pub fn noise() -> HarnessFrame {
    object(json!({"noise": true}))
}

/// A `tool_call` step.
pub fn tool_step(call_id: &str, tool: &str, arguments: Value) -> HarnessStep {
    HarnessStep::ToolCall {
        call_id: call_id.into(),
        tool: tool.into(),
        arguments: arguments.as_object().cloned().unwrap_or_default(),
    }
}

/// A `message` step.
pub fn prose(text: &str) -> HarnessStep {
    HarnessStep::Message { text: text.into() }
}

/// What the transport saw, shared with its channels.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every opened turn request.
    pub opened: RefCell<Vec<HarnessTurnRequest>>,
    /// Every written frame.
    pub written: RefCell<Vec<HarnessFrame>>,
    /// Frames read, across channels.
    pub reads: Cell<usize>,
    /// Channel closes.
    pub closes: Cell<usize>,
    /// Events in order: `open`, `read`, `write`, `close`.
    pub order: RefCell<Vec<&'static str>>,
}

/// A transport over batches of frames.
pub struct BatchTransport {
    batches: Rc<Vec<Vec<HarnessFrame>>>,
    /// What it saw.
    pub seen: Rc<Seen>,
}

impl BatchTransport {
    /// A transport replaying `batches`.
    pub fn new(batches: Vec<Vec<HarnessFrame>>) -> Rc<BatchTransport> {
        Rc::new(BatchTransport { batches: Rc::new(batches), seen: Rc::new(Seen::default()) })
    }
}

impl HarnessTransport for BatchTransport {
    fn open(
        &self,
        request: HarnessTurnRequest,
        _signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn HarnessChannel>, TransportError>> {
        self.seen.opened.borrow_mut().push(request);
        self.seen.order.borrow_mut().push("open");
        let channel = BatchChannel {
            batches: self.batches.clone(),
            seen: self.seen.clone(),
            batch: Cell::new(0),
            frame: Cell::new(0),
            unlocked: Cell::new(0),
        };
        Box::pin(async move { Ok(Box::new(channel) as Box<dyn HarnessChannel>) })
    }
}

struct BatchChannel {
    batches: Rc<Vec<Vec<HarnessFrame>>>,
    seen: Rc<Seen>,
    batch: Cell<usize>,
    frame: Cell<usize>,
    unlocked: Cell<usize>,
}

impl BatchChannel {
    fn next_frame(&self) -> Option<HarnessFrame> {
        loop {
            let batch = self.batches.get(self.batch.get())?;
            if let Some(frame) = batch.get(self.frame.get()) {
                self.frame.set(self.frame.get() + 1);
                return Some(frame.clone());
            }
            if self.unlocked.get() == 0 {
                return None;
            }
            self.unlocked.set(self.unlocked.get() - 1);
            self.batch.set(self.batch.get() + 1);
            self.frame.set(0);
        }
    }
}

impl HarnessChannel for BatchChannel {
    fn read(&self, _signal: AbortSignal) -> LocalBoxFuture<'_, Result<Option<HarnessFrame>, TransportError>> {
        let frame = self.next_frame();
        if frame.is_some() {
            self.seen.reads.set(self.seen.reads.get() + 1);
        }
        self.seen.order.borrow_mut().push("read");
        Box::pin(async move { Ok(frame) })
    }

    fn write(&self, frame: HarnessFrame, _signal: AbortSignal) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        self.seen.written.borrow_mut().push(frame);
        self.seen.order.borrow_mut().push("write");
        self.unlocked.set(self.unlocked.get() + 1);
        Box::pin(async { Ok(()) })
    }

    fn close(&self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        self.seen.closes.set(self.seen.closes.get() + 1);
        self.seen.order.borrow_mut().push("close");
        Box::pin(async { Ok(()) })
    }
}
