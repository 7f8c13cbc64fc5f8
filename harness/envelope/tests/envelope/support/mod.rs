//! A scripted kernel double, scripted plugins and request builders.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod reference;

use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::executor::Executor;
use sharedos_envelope::host::RuntimeHost;
use sharedos_envelope::options::{ExecuteOptions, ExecutorOptions, VirtualClock, DEFAULT_EPOCH};
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_model::access::{AccessContext, Reach};
use sharedos_model::address::Address;
use sharedos_model::capability::{Decision, Requirement, ResourceRef};
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{Escalation, ExecutionRequest, ExecutionResult, RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::instant::Instant;
use sharedos_model::message::MessageEnvelope;
use sharedos_model::tool::{
    ProtocolError, ReadWrite, ToolAnnotations, ToolCall, ToolDefinition, ToolOutcome, ToolResult,
};
use sharedos_port::audit::{AuditEffect, AuditUnavailable};
use sharedos_port::error::KernelError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_port::turn_kernel::{RefusedCall, TurnEnd, TurnKernel, TurnScope};
use sharedos_testkit::call::TRACE;
use sharedos_testkit::result::result;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

pub const PURPOSE: &str = "answer the owner";

pub fn agent() -> Address {
    Address::agent("agent-a")
}

pub fn owner() -> Address {
    Address::human("user-owner")
}

/// Virtual milliseconds since the test started.
pub fn now_ms() -> u64 {
    thread_origin().elapsed().as_millis() as u64
}

thread_local! {
    static ORIGIN: Cell<Option<tokio::time::Instant>> = const { Cell::new(None) };
}

/// Call at the start of each test (the executor helper does).
pub fn mark_origin() {
    ORIGIN.with(|o| o.set(Some(tokio::time::Instant::now())));
}

fn thread_origin() -> tokio::time::Instant {
    ORIGIN.with(|o| o.get()).unwrap_or_else(tokio::time::Instant::now)
}

/// Milliseconds between the default epoch and `text`.
pub fn ms_of(text: &str) -> i64 {
    Instant::parse(text).unwrap().0 - Instant::parse(DEFAULT_EPOCH).unwrap().0
}

pub fn tool(name: &str, read_write: ReadWrite, idempotent: bool) -> ToolDefinition {
    ToolDefinition {
        name: name.to_string(),
        description: format!("The {name} tool."),
        namespace: name.split('.').next().unwrap().to_string(),
        source: "native".to_string(),
        read_write,
        input_schema: Map::new().into(),
        output_schema: None,
        required_capability: Requirement {
            resource: ResourceRef {
                namespace: name.split('.').next().unwrap().to_string(),
                path: vec!["docs".into()],
                owner: None,
            },
            action: if read_write == ReadWrite::Read { "read".into() } else { "write".into() },
        },
        annotations: idempotent.then(|| ToolAnnotations { idempotent: Some(true), ..ToolAnnotations::default() }),
        metadata: None,
    }
}

pub fn read_tool(name: &str) -> ToolDefinition {
    tool(name, ReadWrite::Read, false)
}

pub fn write_tool(name: &str) -> ToolDefinition {
    tool(name, ReadWrite::Write, false)
}

pub fn idempotent_write(name: &str) -> ToolDefinition {
    tool(name, ReadWrite::Write, true)
}

pub fn escalate_tool() -> ToolDefinition {
    tool("sharedos.escalate", ReadWrite::Write, false)
}

pub fn request(tools: Vec<ToolDefinition>) -> ExecutionRequest {
    ExecutionRequest {
        version: "1".into(),
        execution_id: "exec-1".into(),
        agent: agent(),
        context: AccessContext {
            namespace_id: "world-1".into(),
            actor: agent(),
            authority: owner(),
            owner: owner(),
            purpose: PURPOSE.into(),
            trace_id: TRACE.into(),
            enabled_tool_namespaces: vec!["files".into(), "payments".into()],
            now: "2025-12-31T00:00:00.000Z".into(),
            turn_id: None,
        },
        message: MessageEnvelope {
            version: "1".into(),
            id: "msg-1".into(),
            sender: owner(),
            receiver: agent(),
            purpose: PURPOSE.into(),
            payload: json!({"text": "hello"}),
            trace_id: TRACE.into(),
            created_at: "2025-12-31T00:00:00.000Z".into(),
            reply_to: None,
            provenance: None,
        },
        tools: tools.into(),
        state: None,
        options: None,
        metadata: None,
    }
}

/// How a scripted tool answers.
#[derive(Clone, Debug)]
pub enum Answer {
    Succeed,
    Deny(&'static str),
    Fail(&'static str),
    /// A result that breaks the ToolResult bounds.
    Malformed,
}

/// One scripted tool handler.
#[derive(Clone, Debug)]
pub struct Handler {
    pub delay_ms: u64,
    pub honours_abort: bool,
    pub answer: Answer,
    /// The pre-effect decision write fails with this effect.
    pub decision_outage: Option<AuditEffect>,
    /// On abort, reject with the abort reason itself (a stub that passes it on).
    pub reject_with_abort_reason: bool,
    /// On abort, reject with an audit outage whatever the reason.
    pub outage_on_abort: bool,
}

impl Handler {
    pub fn answer(answer: Answer) -> Handler {
        Handler {
            delay_ms: 0,
            honours_abort: true,
            answer,
            decision_outage: None,
            reject_with_abort_reason: false,
            outage_on_abort: false,
        }
    }

    pub fn slow(delay_ms: u64, answer: Answer) -> Handler {
        Handler { delay_ms, ..Handler::answer(answer) }
    }

    pub fn stubborn(delay_ms: u64, answer: Answer) -> Handler {
        Handler { delay_ms, honours_abort: false, ..Handler::answer(answer) }
    }

    pub fn outage(effect: AuditEffect) -> Handler {
        Handler { decision_outage: Some(effect), ..Handler::answer(Answer::Succeed) }
    }
}

/// One line of the double's audit trail.
#[derive(Clone, Debug, PartialEq)]
pub struct Audit {
    pub kind: &'static str,
    pub outcome: String,
    pub reason: Option<String>,
    pub source: &'static str,
    pub tool: Option<String>,
    pub cause: Option<String>,
    pub at_ms: u64,
}

/// Which opening operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Open,
    Admit,
    Reach,
    List,
    Escalate,
}

pub struct FakeScope(Rc<Cell<usize>>);

impl TurnScope for FakeScope {
    fn close(&self) {
        self.0.set(self.0.get() + 1);
    }
}

/// A scripted `TurnKernel`.
#[derive(Default)]
pub struct FakeKernel {
    pub catalogue: RefCell<Vec<ToolDefinition>>,
    pub refuse_admission: RefCell<Option<ReasonCode>>,
    pub reach: RefCell<Option<Reach>>,
    pub handlers: RefCell<BTreeMap<String, Handler>>,
    pub failures: RefCell<BTreeMap<Op, KernelError>>,
    pub delays: RefCell<BTreeMap<Op, u64>>,
    pub ops: RefCell<Vec<String>>,
    pub audit: RefCell<Vec<Audit>>,
    pub turn_ends: RefCell<Vec<TurnEnd>>,
    pub refused: RefCell<Vec<RefusedCall>>,
    pub scope_closes: Rc<Cell<usize>>,
    pub invoke_contexts: RefCell<Vec<AccessContext>>,
    pub turn_end_contexts: RefCell<Vec<AccessContext>>,
    pub turn_end_signal_free: Cell<bool>,
}

pub fn sink_error() -> AuditUnavailable {
    AuditUnavailable { effect: AuditEffect::None, cause: "sink refused the write".into() }
}

impl FakeKernel {
    pub fn with_tools(tools: Vec<ToolDefinition>) -> Rc<FakeKernel> {
        let kernel = FakeKernel::default();
        *kernel.catalogue.borrow_mut() = tools;
        Rc::new(kernel)
    }

    pub fn handle(&self, tool: &str, handler: Handler) {
        self.handlers.borrow_mut().insert(tool.to_string(), handler);
    }

    pub fn fail(&self, op: Op, error: KernelError) {
        self.failures.borrow_mut().insert(op, error);
    }

    pub fn delay(&self, op: Op, ms: u64) {
        self.delays.borrow_mut().insert(op, ms);
    }

    fn write(
        &self,
        kind: &'static str,
        outcome: &str,
        reason: Option<&str>,
        source: &'static str,
        tool: Option<&str>,
        cause: Option<&str>,
    ) {
        self.audit.borrow_mut().push(Audit {
            kind,
            outcome: outcome.into(),
            reason: reason.map(str::to_string),
            source,
            tool: tool.map(str::to_string),
            cause: cause.map(str::to_string),
            at_ms: now_ms(),
        });
    }

    pub fn trail(&self, kind: &str) -> Vec<Audit> {
        self.audit.borrow().iter().filter(|a| a.kind == kind).cloned().collect()
    }

    pub fn op_count(&self, prefix: &str) -> usize {
        self.ops.borrow().iter().filter(|o| o.starts_with(prefix)).count()
    }

    async fn opening(&self, op: Op, name: &str) -> Result<(), KernelError> {
        self.ops.borrow_mut().push(name.to_string());
        let delay = self.delays.borrow().get(&op).copied();
        if let Some(ms) = delay {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        match self.failures.borrow().get(&op) {
            Some(error) => Err(error.clone()),
            None => Ok(()),
        }
    }

    async fn invoke(
        &self,
        context: &AccessContext,
        call: &ToolCall,
        signal: &AbortSignal,
    ) -> Result<ToolResult, KernelError> {
        self.ops.borrow_mut().push(format!("invoke:{}", call.tool));
        self.invoke_contexts.borrow_mut().push(context.clone());
        let handler = self.handlers.borrow().get(&call.tool).cloned().unwrap_or(Handler::answer(Answer::Succeed));
        if let Some(effect) = handler.decision_outage {
            return Err(KernelError::AuditUnavailable(AuditUnavailable {
                effect,
                cause: "sink refused the write".into(),
            }));
        }
        if let Answer::Deny(code) = handler.answer {
            self.write("tool.invoked", "denied", Some(code), "kernel", Some(&call.tool), None);
            return Ok(result(
                &call.id,
                &call.tool,
                ToolOutcome::Denied { error: ProtocolError::new(code, "refused") },
            ));
        }
        if signal.is_aborted() {
            return Err(KernelError::Aborted(signal.reason().unwrap()));
        }
        let sleep = tokio::time::sleep(Duration::from_millis(handler.delay_ms));
        if handler.honours_abort {
            tokio::select! {
                () = sleep => {}
                () = signal.aborted() => {
                    let reason = signal.reason().unwrap();
                    self.write("tool.invoked", "interrupted", Some("operation_aborted"), "kernel", Some(&call.tool), None);
                    if handler.outage_on_abort {
                        return Err(KernelError::AuditUnavailable(sink_error()));
                    }
                    if handler.reject_with_abort_reason {
                        if let AbortReason::AuditOutage(outage) = reason {
                            return Err(KernelError::AuditUnavailable(outage));
                        }
                    }
                    return Err(KernelError::Aborted(reason));
                }
            }
        } else {
            sleep.await;
        }
        let outcome = match handler.answer {
            Answer::Fail(code) => ToolOutcome::Failed { error: ProtocolError::new(code, "broke") },
            _ => ToolOutcome::Succeeded { output: json!({"ok": true}) },
        };
        let mut answer = result(&call.id, &call.tool, outcome);
        if let Answer::Malformed = handler.answer {
            answer.completed_at = "not a timestamp".into();
        }
        let status = answer.status().as_str().to_string();
        let code = answer.error().map(|e| e.code.clone());
        self.write("tool.invoked", &status, code.as_deref(), "kernel", Some(&call.tool), None);
        Ok(answer)
    }
}

impl TurnKernel for FakeKernel {
    fn open_turn_authority<'a>(
        &'a self,
        _context: &'a AccessContext,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Rc<dyn TurnScope>, KernelError>> {
        Box::pin(async move {
            self.opening(Op::Open, "open").await?;
            self.write("authority.resolved", "succeeded", None, "kernel", None, None);
            Ok(Rc::new(FakeScope(self.scope_closes.clone())) as Rc<dyn TurnScope>)
        })
    }

    fn admit_turn<'a>(
        &'a self,
        _context: &'a AccessContext,
        _agent: &'a Address,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Decision, KernelError>> {
        Box::pin(async move {
            self.opening(Op::Admit, "admit").await?;
            Ok(match *self.refuse_admission.borrow() {
                Some(code) => Decision::deny(code),
                None => Decision::allow("grant-1"),
            })
        })
    }

    fn reach<'a>(
        &'a self,
        _context: &'a AccessContext,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Reach, KernelError>> {
        Box::pin(async move {
            self.opening(Op::Reach, "reach").await?;
            Ok(self.reach.borrow().clone().unwrap_or(Reach::Computed { reach: vec![] }))
        })
    }

    fn list_tools<'a>(
        &'a self,
        _context: &'a AccessContext,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Vec<Arc<ToolDefinition>>, KernelError>> {
        Box::pin(async move {
            self.opening(Op::List, "list").await?;
            Ok(self.catalogue.borrow().iter().cloned().map(Arc::new).collect())
        })
    }

    fn invoke_tool<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ToolCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, KernelError>> {
        Box::pin(self.invoke(context, call, signal))
    }

    fn record_escalation<'a>(
        &'a self,
        context: &'a AccessContext,
        reason: &'a str,
        _execution_id: &'a str,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Escalation, KernelError>> {
        Box::pin(async move {
            self.opening(Op::Escalate, "escalate").await?;
            self.write("escalation.requested", "escalated", Some("escalation_requested"), "kernel", None, None);
            Ok(Escalation {
                reason: reason.into(),
                reviewer: context.owner.clone(),
                requested_at: context.now.clone(),
                requested_authority: None,
                status: "pending".into(),
            })
        })
    }

    fn record_turn_end<'a>(&'a self, context: &'a AccessContext, end: &'a TurnEnd) -> LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            self.ops.borrow_mut().push("turn_end".into());
            let outcome = match end.status.as_str() {
                "cancelled" => "failed",
                other => other,
            };
            self.write("turn.ended", outcome, end.reason_code.as_deref(), "none", None, None);
            self.turn_ends.borrow_mut().push(end.clone());
            self.turn_end_contexts.borrow_mut().push(context.clone());
        })
    }

    fn record_refused_call<'a>(
        &'a self,
        _context: &'a AccessContext,
        refused: &'a RefusedCall,
    ) -> LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            self.ops.borrow_mut().push("refused".into());
            self.write(
                "tool.invoked",
                "denied",
                Some(&refused.reason_code),
                "envelope",
                Some(&refused.tool),
                refused.cause.as_deref(),
            );
            self.refused.borrow_mut().push(refused.clone());
        })
    }
}

pub type Script = Rc<
    dyn Fn(Rc<RuntimeTurnRequest>, RuntimeHost, AbortSignal) -> LocalBoxFuture<'static, Result<Value, RuntimeFailure>>,
>;

/// A plugin whose turn is a closure.
pub struct ScriptedPlugin {
    pub manifest: RuntimeManifest,
    pub script: Script,
    pub runs: Cell<usize>,
    pub seen: RefCell<Vec<Rc<RuntimeTurnRequest>>>,
    pub hosts: RefCell<Vec<RuntimeHost>>,
}

pub fn manifest() -> RuntimeManifest {
    RuntimeManifest { id: "scripted".into(), version: "0.1.0".into(), protocol_version: "1".into(), metadata: None }
}

pub fn plugin<F, Fut>(script: F) -> Rc<ScriptedPlugin>
where
    F: Fn(Rc<RuntimeTurnRequest>, RuntimeHost, AbortSignal) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<Value, RuntimeFailure>> + 'static,
{
    Rc::new(ScriptedPlugin {
        manifest: manifest(),
        script: Rc::new(move |r, h, s| Box::pin(script(r, h, s))),
        runs: Cell::new(0),
        seen: RefCell::new(vec![]),
        hosts: RefCell::new(vec![]),
    })
}

impl RuntimePlugin for ScriptedPlugin {
    fn manifest(&self) -> RuntimeManifest {
        self.manifest.clone()
    }

    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>> {
        self.runs.set(self.runs.get() + 1);
        self.seen.borrow_mut().push(request.clone());
        self.hosts.borrow_mut().push(host.clone());
        (self.script)(request, host, signal)
    }
}

pub fn options() -> ExecutorOptions {
    ExecutorOptions { clock: Rc::new(VirtualClock::default()), ..ExecutorOptions::default() }
}

pub fn grace(ms: u64) -> ExecutorOptions {
    ExecutorOptions { drain_grace_ms: ms, ..options() }
}

pub fn executor(kernel: &Rc<FakeKernel>, plugin: &Rc<ScriptedPlugin>, options: ExecutorOptions) -> Executor {
    mark_origin();
    Executor::new(kernel.clone(), plugin.clone(), options).unwrap()
}

pub async fn run(executor: &Executor, request: ExecutionRequest) -> ExecutionResult {
    executor.execute(request, ExecuteOptions::default()).await.unwrap()
}

pub fn retryable(result: &ExecutionResult) -> Option<bool> {
    result.error.as_ref().and_then(|e| e.retryable)
}

pub async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// Sleeps until the turn's hard signal fires, then reports it as a throw.
pub async fn stall(signal: AbortSignal) -> Result<Value, RuntimeFailure> {
    signal.aborted().await;
    Err(RuntimeFailure::message("stopped"))
}
