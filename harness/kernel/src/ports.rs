//! Host ports the kernel calls out to. Every one of them can fail, and the
//! kernel treats each failure as the kernel rules say: fail closed, never
//! partial (K5, K31, K48, K64, K68).
//!
//! The runtime is single-threaded (one current-thread runtime per cell), so
//! async methods return [`LocalBoxFuture`] and shared handles are `Rc`.

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use sharedos_model::access::AccessContext;
use sharedos_model::audit::AuditEvent;
use sharedos_model::capability::Grant;
use sharedos_model::capability::Requirement;
use sharedos_model::message::MessageEnvelope;
use sharedos_model::tool::{ToolCall, ToolDefinition, ToolResult};
use sharedos_port::audit::AuditUnavailable;
use sharedos_port::signal::AbortSignal;
use std::any::Any;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

/// Loads the grants a context may exercise.
pub trait GrantSource {
    /// The raw grant material (expected: a JSON array of grants). A `Value`
    /// so that malformed material reaches the kernel and is refused there;
    /// `Err` means the source threw.
    fn load<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>>;

    /// The same load answered with typed grants, for a source that keeps
    /// well-formed grants and so can spare the kernel a JSON round trip.
    /// It must stand for exactly one call of [`GrantSource::load`] and
    /// answer what that call's material parses to. `None` (the default)
    /// sends the kernel to `load`.
    fn load_typed<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> Option<LocalBoxFuture<'a, Result<Vec<Rc<Grant>>, String>>> {
        let _ = (context, signal);
        None
    }
}

/// Loads the host policy a turn's ceiling decisions see (optional port).
pub trait PolicySource {
    /// The opaque policy and its non-empty version; `Err` means the source threw.
    fn load<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<(Value, String), String>>;
}

/// Where audit records go.
pub trait AuditSink {
    /// Writes one record; `Err` means the sink threw.
    fn write<'a>(&'a self, event: &'a AuditEvent) -> LocalBoxFuture<'a, Result<(), String>>;

    /// Writes one record the caller hands over, so a sink that keeps records
    /// can store it without a copy. `Err` gives the record back with why the
    /// sink threw. The default writes through [`AuditSink::write`].
    fn write_owned<'a>(&'a self, event: AuditEvent) -> LocalBoxFuture<'a, Result<(), (AuditEvent, String)>> {
        Box::pin(async move {
            match self.write(&event).await {
                Ok(()) => Ok(()),
                Err(why) => Err((event, why)),
            }
        })
    }
}

/// A call after its arguments passed the tool's own parser: the frozen value
/// both the requirement and the invocation are derived from.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub tool: String,
    /// The parser's output, not the model's input.
    pub arguments: Map<String, Value>,
    /// The call's trace.
    pub trace_id: String,
    /// When the runtime asked.
    pub requested_at: String,
    /// What the tool's requirement step built for its invoke step (see
    /// [`Resolution`]); set by the kernel between the two.
    pub prepared: Option<Prepared>,
}

/// Whatever a tool's requirement step built that its invoke step needs
/// (`messages.request` builds its request envelope there). It travels on
/// the parsed call, so it lives exactly as long as the call it was built
/// for and no other call can see it.
#[derive(Clone)]
pub struct Prepared(Rc<dyn Any>);

impl Prepared {
    /// Wraps what was prepared.
    #[must_use]
    pub fn new<T: Any>(value: T) -> Prepared {
        Prepared(Rc::new(value))
    }

    /// What was prepared, when it is a `T`.
    #[must_use]
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prepared(..)")
    }
}

impl PartialEq for Prepared {
    fn eq(&self, other: &Prepared) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// A tool's exact requirement for one call, and what it built on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// The requirement the call is authorized against.
    pub requirement: Requirement,
    /// Handed to the tool's `invoke` on the parsed call.
    pub prepared: Option<Prepared>,
}

impl From<Requirement> for Resolution {
    fn from(requirement: Requirement) -> Resolution {
        Resolution { requirement, prepared: None }
    }
}

impl ParsedCall {
    /// The call with its arguments replaced by the parser's output.
    #[must_use]
    pub fn new(call: &ToolCall, arguments: Map<String, Value>) -> ParsedCall {
        ParsedCall {
            id: call.id.clone(),
            tool: call.tool.clone(),
            arguments,
            trace_id: call.trace_id.clone(),
            requested_at: call.requested_at.clone(),
            prepared: None,
        }
    }
}

/// Why a tool handler's `invoke` did not return a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandlerError {
    /// The handler threw (host-only text; never audited or shown to a runtime).
    #[error("run the tool: {0}")]
    Failed(String),
    /// The handler stopped because the caller's signal fired.
    #[error("run the tool before the signal fired")]
    Aborted,
    /// A kernel call made from inside the handler met an audit outage.
    #[error(transparent)]
    AuditUnavailable(#[from] AuditUnavailable),
}

/// One tool: its definition, strict parser, requirement and effect.
pub trait ToolHandler {
    /// The registry's definition; the model's view of the tool is never
    /// trusted. Shared, so a listing hands it out without copying it.
    fn definition(&self) -> &Arc<ToolDefinition>;

    /// The mandatory runtime parser; `Err` makes the call `invalid_tool_arguments`.
    ///
    /// # Errors
    /// When the arguments do not fit the tool.
    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String>;

    /// The exact requirement of this call. `None`: the tool does not resolve
    /// one and the call is authorized against the declared ceiling.
    /// `Some(Err)`: resolution threw (`tool_requirement_resolution_failed`).
    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        let _ = (context, call);
        None
    }

    /// Runs the tool on the frozen parsed call.
    fn invoke<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ParsedCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>>;
}

/// A per-context source of tools (e.g. an MCP broker).
pub trait ContextToolProvider {
    /// Stable id; providers are merged in id order.
    fn id(&self) -> &str;

    /// The provider's handlers for `context`; `Err` makes the whole catalogue
    /// unavailable.
    fn list_tools<'a>(
        &'a self,
        context: &'a AccessContext,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Vec<Rc<dyn ToolHandler>>, String>>;
}

/// Delivers messages; host-owned.
pub trait MessageTransport {
    /// The receipt (expected: a `MessageDeliveryResult`). A `Value` so that a
    /// malformed receipt can be refused by the kernel; `Err` means it threw.
    fn deliver<'a>(
        &'a self,
        context: &'a AccessContext,
        envelope: &'a MessageEnvelope,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>>;
}

/// Finds the reply to an accepted `messages.request`.
pub trait MessageRequestRouter {
    /// The reply (expected: a `MessageEnvelope`); a `Value` so malformed
    /// replies can be refused; `Err` means the router threw.
    fn resolve_reply<'a>(
        &'a self,
        context: &'a AccessContext,
        request: &'a MessageEnvelope,
        delivery: &'a Value,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, String>>;
}

/// Turns an envelope into the exact requirement of sending it (optional
/// port; the default is recipient-scoped `sharedos.messaging/[kind,id]/send`).
pub trait MessageCapabilityResolver {
    /// The requirement; `Err` means it threw (`message_requirement_resolution_failed`).
    ///
    /// # Errors
    /// When no requirement can be derived.
    fn resolve(&self, context: &AccessContext, envelope: &MessageEnvelope) -> Result<Requirement, String>;
}

/// Mints audit record ids. Ids are never content-derived.
pub type IdFactory = Rc<dyn Fn() -> String>;

/// Mints the message id of a model-authored `messages.request`.
pub type MessageIdFactory = Rc<dyn Fn(&AccessContext, &ParsedCall) -> String>;

/// How a post-effect audit write failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuditWriteError {
    /// The sink threw.
    #[error("write an audit record: {0}")]
    Failed(String),
    /// The sink did not answer within the write timeout (`audit_write_timeout`).
    #[error("write an audit record within {0} ms")]
    TimedOut(u64),
}

/// Receives post-effect records the sink dropped; the caller's result stands.
pub type AuditErrorHook = Rc<dyn Fn(&AuditEvent, &AuditWriteError)>;

/// Which host port threw a diagnostic-only error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderErrorOrigin {
    /// A context tool provider (by id) failed to list its tools.
    ToolProvider(String),
    /// A tool handler (by tool name) threw.
    ToolHandler(String),
    /// The message transport threw.
    MessageTransport,
    /// The reply router threw.
    MessageRouter,
    /// The message capability resolver threw.
    MessageCapabilityResolver,
}

/// A diagnostic about a host port failure; log only, never shown to a runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    /// Which port.
    pub origin: ProviderErrorOrigin,
    /// The port's own error text.
    pub detail: String,
}

/// Receives provider diagnostics.
pub type ProviderErrorHook = Rc<dyn Fn(&ProviderError)>;

/// A deterministic id factory yielding `<prefix>-1`, `<prefix>-2`, ...
#[must_use]
pub fn counter_ids(prefix: &str) -> IdFactory {
    let prefix = prefix.to_string();
    let next = Cell::new(0_u64);
    Rc::new(move || {
        let n = next.get() + 1;
        next.set(n);
        format!("{prefix}-{n}")
    })
}

/// The message id conformance uses: `<traceId>-message-request`.
#[must_use]
pub fn trace_message_ids() -> MessageIdFactory {
    Rc::new(|context: &AccessContext, _call: &ParsedCall| format!("{}-message-request", context.trace_id))
}
