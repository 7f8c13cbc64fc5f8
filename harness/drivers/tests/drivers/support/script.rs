//! A driver whose sessions answer from a closure, and that records what the
//! loop did to them.

use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_drivers::decision::{AgentTurnDriver, AgentTurnInput, AgentTurnSession, DriverError, SessionOutcome};
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_port::signal::AbortSignal;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// What one `next` does.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Answers at once.
    Now(Value),
    /// Answers after some virtual milliseconds.
    After(u64, Value),
    /// Throws.
    Throw,
    /// Never answers.
    Hang,
}

/// What `close` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// The session has no `close`.
    Absent,
    /// Closes at once.
    Ok,
    /// Throws.
    Throw,
    /// Never finishes.
    Hang,
}

/// What the loop did, shared by the driver and its sessions.
#[derive(Debug, Default)]
pub struct Log {
    /// Requests `open` was given.
    pub opened: RefCell<Vec<Rc<RuntimeTurnRequest>>>,
    /// Inputs of every `next`, in order.
    pub inputs: RefCell<Vec<AgentTurnInput>>,
    /// Statuses of every `close`.
    pub closes: RefCell<Vec<SessionOutcome>>,
    /// Virtual ms at which each `next` was called.
    pub next_at: RefCell<Vec<u64>>,
}

impl Log {
    /// How many times `next` was called.
    pub fn nexts(&self) -> usize {
        self.inputs.borrow().len()
    }

    /// The statuses `close` was called with.
    pub fn closes(&self) -> Vec<SessionOutcome> {
        self.closes.borrow().clone()
    }

    /// How many tool results were handed back.
    pub fn results_seen(&self) -> usize {
        self.inputs.borrow().iter().filter(|i| matches!(i, AgentTurnInput::ToolResult { .. })).count()
    }
}

/// `(index of next, input, request)` to a reply.
pub type Answer = Rc<dyn Fn(usize, &AgentTurnInput, &RuntimeTurnRequest) -> Reply>;

/// A scripted driver.
pub struct ScriptDriver {
    /// What the loop did.
    pub log: Rc<Log>,
    answer: Answer,
    /// The session's prompt hash.
    pub prompt_hash: Option<String>,
    /// Virtual ms `open` takes.
    pub open_ms: u64,
    /// Whether `open` throws.
    pub open_throws: bool,
    /// What `close` does.
    pub close: Close,
    origin: tokio::time::Instant,
}

impl ScriptDriver {
    /// A driver answering with `answer`, closing cleanly, with no prompt hash.
    pub fn new(answer: impl Fn(usize, &AgentTurnInput, &RuntimeTurnRequest) -> Reply + 'static) -> ScriptDriver {
        ScriptDriver {
            log: Rc::new(Log::default()),
            answer: Rc::new(answer),
            prompt_hash: None,
            open_ms: 0,
            open_throws: false,
            close: Close::Ok,
            origin: tokio::time::Instant::now(),
        }
    }

    /// A driver replaying `replies` in order, then hanging.
    pub fn replies(replies: Vec<Reply>) -> ScriptDriver {
        ScriptDriver::new(move |i, _, _| replies.get(i).cloned().unwrap_or(Reply::Hang))
    }
}

/// The manifest of the scripted driver.
pub fn script_manifest() -> RuntimeManifest {
    RuntimeManifest {
        id: "test.script-driver".into(),
        version: "0.0.1".into(),
        protocol_version: PROTOCOL_VERSION.into(),
        metadata: None,
    }
}

impl AgentTurnDriver for ScriptDriver {
    fn manifest(&self) -> RuntimeManifest {
        script_manifest()
    }

    fn open(
        &self,
        request: Rc<RuntimeTurnRequest>,
        _signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn AgentTurnSession>, DriverError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(self.open_ms)).await;
            self.log.opened.borrow_mut().push(request.clone());
            if self.open_throws {
                return Err(DriverError::Message("the scripted open throws".into()));
            }
            Ok(Box::new(ScriptSession {
                log: self.log.clone(),
                answer: self.answer.clone(),
                request,
                prompt_hash: self.prompt_hash.clone(),
                close: self.close,
                origin: self.origin,
            }) as Box<dyn AgentTurnSession>)
        })
    }
}

struct ScriptSession {
    log: Rc<Log>,
    answer: Answer,
    request: Rc<RuntimeTurnRequest>,
    prompt_hash: Option<String>,
    close: Close,
    origin: tokio::time::Instant,
}

impl AgentTurnSession for ScriptSession {
    fn prompt_hash(&self) -> Option<String> {
        self.prompt_hash.clone()
    }

    fn next(&mut self, input: AgentTurnInput, _signal: AbortSignal) -> LocalBoxFuture<'_, Result<Value, DriverError>> {
        let index = self.log.nexts();
        self.log.next_at.borrow_mut().push(self.origin.elapsed().as_millis() as u64);
        let reply = (self.answer)(index, &input, &self.request);
        self.log.inputs.borrow_mut().push(input);
        Box::pin(async move {
            match reply {
                Reply::Now(value) => Ok(value),
                Reply::After(ms, value) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(value)
                }
                Reply::Throw => Err(DriverError::Message("the scripted session throws".into())),
                Reply::Hang => futures::future::pending().await,
            }
        })
    }

    fn close(
        &mut self,
        outcome: SessionOutcome,
        _signal: AbortSignal,
    ) -> Option<LocalBoxFuture<'_, Result<(), DriverError>>> {
        if self.close == Close::Absent {
            return None;
        }
        self.log.closes.borrow_mut().push(outcome);
        let close = self.close;
        Some(Box::pin(async move {
            match close {
                Close::Throw => Err(DriverError::Message("the scripted close throws".into())),
                Close::Hang => futures::future::pending().await,
                _ => Ok(()),
            }
        }))
    }
}

/// A `tool_call` decision stamped for `request`, optionally declaring `step`.
pub fn call(
    request: &RuntimeTurnRequest,
    id: &str,
    tool: &str,
    arguments: Map<String, Value>,
    step: Option<Value>,
) -> Value {
    let mut decision = json!({
        "type": "tool_call",
        "call": {
            "id": id,
            "tool": tool,
            "arguments": arguments,
            "traceId": request.context.trace_id,
            "requestedAt": request.context.now,
        },
    });
    if let Some(step) = step {
        decision["step"] = step;
    }
    decision
}

/// `{type: "complete", output}`.
pub fn complete(output: Value) -> Value {
    json!({"type": "complete", "output": output})
}

/// `{type: "escalate", reason}`.
pub fn escalate(reason: &str) -> Value {
    json!({"type": "escalate", "reason": reason})
}
