//! Small local doubles for the kernel's rule tests.
#![allow(dead_code)]

use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_kernel::builder::KernelBuilder;
use sharedos_kernel::kernel::Kernel;
use sharedos_kernel::ports::{
    AuditSink, ContextToolProvider, GrantSource, HandlerError, MessageRequestRouter, MessageTransport, ParsedCall,
    Resolution, ToolHandler,
};
use sharedos_model::access::AccessContext;
use sharedos_model::audit::{AuditEvent, AuditType};
use sharedos_model::capability::{Capability, Constraints, Grant, Requirement, ResourceRef, Scope};
use sharedos_model::message::MessageEnvelope;
use sharedos_model::tool::{ReadWrite, ToolDefinition, ToolOutcome, ToolResult};
use sharedos_port::audit::{AuditEffect, AuditUnavailable};
use sharedos_port::signal::AbortSignal;
use sharedos_testkit::call::TRACE;
use sharedos_testkit::json::object;
use sharedos_world::constants::{agent, orchestrator, owner, ISSUED_AT, NOW};
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::Arc;

pub const LATER: &str = "2026-08-18T09:00:01.000Z";
pub const SECRET: &str = "SECRET-TEXT-42";

pub fn ctx() -> AccessContext {
    AccessContext {
        namespace_id: "world-test".into(),
        actor: agent(),
        authority: orchestrator(),
        owner: owner(),
        purpose: "probe".into(),
        trace_id: TRACE.into(),
        enabled_tool_namespaces: vec!["files".into(), "messages".into(), "sharedos".into()],
        now: NOW.into(),
        turn_id: None,
    }
}

pub fn grant(id: &str, namespace: &str, path: &[&str], actions: &[&str]) -> Grant {
    Grant {
        id: id.into(),
        namespace_id: "world-test".into(),
        subject: agent(),
        issuer: orchestrator(),
        capabilities: vec![Capability {
            resource: ResourceRef::owned(namespace, path, &owner()),
            actions: actions.iter().map(|a| (*a).to_string()).collect(),
            scope: Scope::Descendants,
        }],
        constraints: Constraints::default(),
        issued_at: ISSUED_AT.into(),
        revoked_at: None,
        parent_grant_id: None,
        metadata: None,
    }
}

pub fn read_grant() -> Grant {
    grant("grant-read", "files", &["Workspace"], &["read"])
}

// ---------------------------------------------------------------- grant source

pub struct Grants {
    pub material: RefCell<Result<Value, String>>,
    pub loads: Cell<usize>,
}

impl Grants {
    pub fn of(grants: &[Grant]) -> Rc<Grants> {
        Rc::new(Grants { material: RefCell::new(Ok(json!(grants))), loads: Cell::new(0) })
    }
    pub fn failing() -> Rc<Grants> {
        Rc::new(Grants { material: RefCell::new(Err(SECRET.into())), loads: Cell::new(0) })
    }
    pub fn set(&self, material: Result<Value, String>) {
        *self.material.borrow_mut() = material;
    }
}

impl GrantSource for Grants {
    fn load<'a>(&'a self, _c: &'a AccessContext, _s: &'a AbortSignal) -> LocalBoxFuture<'a, Result<Value, String>> {
        self.loads.set(self.loads.get() + 1);
        let material = self.material.borrow().clone();
        Box::pin(async move { material })
    }
}

// ---------------------------------------------------------------- audit sink

#[derive(Default)]
pub struct Sink {
    pub events: RefCell<Vec<AuditEvent>>,
    pub fail: RefCell<BTreeSet<AuditType>>,
    pub hang: RefCell<BTreeSet<AuditType>>,
}

impl Sink {
    pub fn new() -> Rc<Sink> {
        Rc::new(Sink::default())
    }
    pub fn fail_on(&self, kind: AuditType) {
        self.fail.borrow_mut().insert(kind);
    }
    pub fn of(&self, kind: AuditType) -> Vec<AuditEvent> {
        self.events.borrow().iter().filter(|e| e.kind == kind).cloned().collect()
    }
    pub fn count(&self, kind: AuditType) -> usize {
        self.of(kind).len()
    }
    pub fn last(&self, kind: AuditType) -> AuditEvent {
        self.of(kind).pop().expect("an event of that type")
    }
    pub fn text(&self) -> String {
        serde_json::to_string(&*self.events.borrow()).unwrap()
    }
}

impl AuditSink for Sink {
    fn write<'a>(&'a self, event: &'a AuditEvent) -> LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if self.hang.borrow().contains(&event.kind) {
                futures::future::pending::<()>().await;
            }
            if self.fail.borrow().contains(&event.kind) {
                return Err(format!("sink down {SECRET}"));
            }
            self.events.borrow_mut().push(event.clone());
            Ok(())
        })
    }
}

// ---------------------------------------------------------------- tools

/// What a test tool does when invoked.
#[derive(Clone)]
pub enum Behaviour {
    Succeed,
    Throw,
    WrongCallId,
    WaitForAbort,
    AuditOutage,
}

/// A `files`-style tool: ceiling `files/[]/<action>`, requirement from `path`.
pub struct TestTool {
    pub definition: Arc<ToolDefinition>,
    pub behaviour: RefCell<Behaviour>,
    /// Overrides the resolved requirement (for crossing/escaping tools).
    pub requirement: RefCell<Option<Result<Requirement, String>>>,
    pub invoked: RefCell<Vec<ParsedCall>>,
    pub parsed: Cell<usize>,
}

pub fn definition(name: &str, namespace: &str, resource_ns: &str, action: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: format!("test tool {name}"),
        namespace: namespace.into(),
        source: "native".into(),
        read_write: ReadWrite::Read,
        input_schema: object(json!({"type": "object"})).into(),
        output_schema: None,
        required_capability: Requirement {
            resource: ResourceRef { namespace: resource_ns.into(), path: vec![], owner: None },
            action: action.into(),
        },
        annotations: None,
        metadata: None,
    }
}

impl TestTool {
    pub fn new(name: &str, action: &str) -> Rc<TestTool> {
        TestTool::with(definition(name, "files", "files", action))
    }
    pub fn with(definition: ToolDefinition) -> Rc<TestTool> {
        Rc::new(TestTool {
            definition: Arc::new(definition),
            behaviour: RefCell::new(Behaviour::Succeed),
            requirement: RefCell::new(None),
            invoked: RefCell::new(Vec::new()),
            parsed: Cell::new(0),
        })
    }
    pub fn behave(&self, behaviour: Behaviour) {
        *self.behaviour.borrow_mut() = behaviour;
    }
    pub fn resolve_to(&self, requirement: Result<Requirement, String>) {
        *self.requirement.borrow_mut() = Some(requirement);
    }
    pub fn calls(&self) -> usize {
        self.invoked.borrow().len()
    }
}

impl ToolHandler for TestTool {
    fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    /// Accepts `{path: "A/B"}` and normalises it to segments.
    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        self.parsed.set(self.parsed.get() + 1);
        let path = arguments.get("path").and_then(Value::as_str).ok_or(format!("no path {SECRET}"))?;
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        Ok(object(json!({"path": segments})))
    }

    fn resolve_requirement(&self, _context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        if let Some(fixed) = self.requirement.borrow().clone() {
            return Some(fixed.map(Resolution::from));
        }
        let path: Vec<String> = serde_json::from_value(call.arguments["path"].clone()).unwrap_or_default();
        let declared = &self.definition.required_capability;
        Some(Ok(Requirement {
            resource: ResourceRef { namespace: declared.resource.namespace.clone(), path, owner: None },
            action: declared.action.clone(),
        }
        .into()))
    }

    fn invoke<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ParsedCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>> {
        self.invoked.borrow_mut().push(call.clone());
        let behaviour = self.behaviour.borrow().clone();
        Box::pin(async move {
            let ok = |id: String| ToolResult {
                call_id: id,
                tool: call.tool.clone(),
                completed_at: context.now.clone(),
                metadata: None,
                outcome: ToolOutcome::Succeeded { output: json!({"content": SECRET, "path": call.arguments["path"]}) },
            };
            match behaviour {
                Behaviour::Succeed => Ok(ok(call.id.clone())),
                Behaviour::WrongCallId => Ok(ok(format!("{}-other", call.id))),
                Behaviour::Throw => Err(HandlerError::Failed(SECRET.into())),
                Behaviour::WaitForAbort => {
                    signal.aborted().await;
                    Err(HandlerError::Aborted)
                }
                Behaviour::AuditOutage => Err(HandlerError::AuditUnavailable(AuditUnavailable {
                    effect: AuditEffect::None,
                    cause: SECRET.into(),
                })),
            }
        })
    }
}

// ---------------------------------------------------------------- providers

pub struct Provider {
    pub id: String,
    pub tools: RefCell<Result<Vec<Rc<dyn ToolHandler>>, String>>,
    pub lists: Cell<usize>,
}

impl Provider {
    pub fn new(id: &str, tools: Vec<Rc<dyn ToolHandler>>) -> Rc<Provider> {
        Rc::new(Provider { id: id.into(), tools: RefCell::new(Ok(tools)), lists: Cell::new(0) })
    }
}

impl ContextToolProvider for Provider {
    fn id(&self) -> &str {
        &self.id
    }
    fn list_tools<'a>(
        &'a self,
        _c: &'a AccessContext,
        _s: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Vec<Rc<dyn ToolHandler>>, String>> {
        self.lists.set(self.lists.get() + 1);
        let tools = self.tools.borrow().clone();
        Box::pin(async move { tools })
    }
}

// ---------------------------------------------------------------- messaging

pub enum Receipt {
    Accept,
    Deny(&'static str),
    WrongId,
    Malformed,
    Throw,
    AbortThenThrow,
}

pub struct Transport {
    pub receipt: RefCell<Receipt>,
    pub delivered: RefCell<Vec<MessageEnvelope>>,
}

impl Transport {
    pub fn new() -> Rc<Transport> {
        Rc::new(Transport { receipt: RefCell::new(Receipt::Accept), delivered: RefCell::new(Vec::new()) })
    }
    pub fn answer(&self, receipt: Receipt) {
        *self.receipt.borrow_mut() = receipt;
    }
}

impl MessageTransport for Transport {
    fn deliver<'a>(
        &'a self,
        context: &'a AccessContext,
        envelope: &'a MessageEnvelope,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>> {
        self.delivered.borrow_mut().push(envelope.clone());
        let now = context.now.clone();
        let result = match &*self.receipt.borrow() {
            Receipt::Accept => Ok(json!({"status": "accepted", "messageId": envelope.id, "timestamp": now})),
            Receipt::Deny(code) => Ok(json!({"status": "denied", "messageId": envelope.id, "timestamp": now,
                                              "error": {"code": code, "message": "route is gone"}})),
            Receipt::WrongId => Ok(json!({"status": "accepted", "messageId": "someone-else", "timestamp": now})),
            Receipt::Malformed => Ok(json!({"status": "accepted", "messageId": envelope.id})),
            Receipt::Throw => Err(SECRET.to_string()),
            Receipt::AbortThenThrow => {
                signal.abort(sharedos_port::signal::AbortReason::HostCancelled);
                Err(SECRET.to_string())
            }
        };
        Box::pin(async move { result })
    }
}

pub enum Reply {
    Echo,
    Mutate(fn(&mut Value)),
    Throw,
}

pub struct Router {
    pub reply: RefCell<Reply>,
}

impl Router {
    pub fn new() -> Rc<Router> {
        Rc::new(Router { reply: RefCell::new(Reply::Echo) })
    }
    pub fn answer(&self, reply: Reply) {
        *self.reply.borrow_mut() = reply;
    }
}

impl MessageRequestRouter for Router {
    fn resolve_reply<'a>(
        &'a self,
        _c: &'a AccessContext,
        request: &'a MessageEnvelope,
        _d: &'a Value,
        _s: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>> {
        let mut reply = json!({
            "version": request.version, "id": format!("reply-{}", request.id),
            "sender": request.receiver, "receiver": request.sender, "purpose": request.purpose,
            "payload": {"status": "green"}, "traceId": request.trace_id, "createdAt": LATER, "replyTo": request.id,
        });
        let result = match &*self.reply.borrow() {
            Reply::Echo => Ok(reply),
            Reply::Mutate(change) => {
                change(&mut reply);
                Ok(reply)
            }
            Reply::Throw => Err(SECRET.to_string()),
        };
        Box::pin(async move { result })
    }
}

// ---------------------------------------------------------------- kernels

pub fn builder(grants: &Rc<Grants>, sink: &Rc<Sink>) -> KernelBuilder {
    Kernel::builder(grants.clone(), sink.clone())
}

pub fn kernel_with(grants: &Rc<Grants>, sink: &Rc<Sink>, tools: &[Rc<TestTool>]) -> Kernel {
    let mut b = builder(grants, sink);
    for tool in tools {
        b = b.tool(tool.clone());
    }
    b.build().unwrap()
}
