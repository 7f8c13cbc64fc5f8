//! `RuntimeHost`: the five members a runtime may use, and nothing that
//! reaches authority.

use crate::error::HostError;
use crate::events::EventKind;
use crate::mediation;
use crate::turn::Turn;
use futures::future::LocalBoxFuture;
use serde_json::{json, Value};
use sharedos_model::execution::{RuntimeEvent, RuntimeLimits};
use sharedos_model::tool::{ToolCall, ToolResult};
use sharedos_model::validate::{drop_proto_keys, identifier, ValidationError};
use sharedos_port::signal::AbortSignal;
use std::fmt;
use std::rc::Rc;

/// A runtime's own claim about where in its loop a call sits. A claim,
/// never a permission; it must be a non-negative integer when present.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ToolInvocationOptions {
    /// The declared step (kept as a JSON number so a malformed claim is representable).
    pub step: Option<f64>,
}

impl ToolInvocationOptions {
    /// No declared step.
    #[must_use]
    pub fn none() -> ToolInvocationOptions {
        ToolInvocationOptions { step: None }
    }

    /// A call declaring `step`.
    #[must_use]
    pub fn at_step(step: u64) -> ToolInvocationOptions {
        // Steps are bounded by maxSteps (≤ 1000 from a request), far inside f64's exact range.
        ToolInvocationOptions { step: Some(step as f64) }
    }
}

/// The runtime's handle on its turn. Clones share the turn.
#[derive(Clone)]
pub struct RuntimeHost {
    turn: Rc<Turn>,
    draining: AbortSignal,
}

impl fmt::Debug for RuntimeHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeHost").field("limits", &self.turn.limits).finish_non_exhaustive()
    }
}

impl RuntimeHost {
    pub(crate) fn new(turn: Rc<Turn>) -> RuntimeHost {
        // The runtime gets a follower of the soft signal: it fires with it,
        // but aborting it does not drain the turn.
        let draining = AbortSignal::new();
        turn.deadlines.soft().forward_to(&draining, None);
        RuntimeHost { turn, draining }
    }

    /// The turn's resolved limits.
    #[must_use]
    pub fn limits(&self) -> RuntimeLimits {
        self.turn.limits
    }

    /// Asks for one tool call; the only way to cause an effect. The checks
    /// up to `tool.requested` (and an envelope refusal) happen at call time;
    /// the kernel round trip keeps running even if the future is dropped.
    pub fn invoke_tool(
        &self,
        call: ToolCall,
        options: ToolInvocationOptions,
    ) -> LocalBoxFuture<'static, Result<ToolResult, HostError>> {
        mediation::invoke(&self.turn, call, options.step)
    }

    /// Records an observation as `runtime.event`.
    ///
    /// # Errors
    /// When the turn has closed or stopped, or the event is malformed.
    pub fn emit(&self, event: RuntimeEvent) -> Result<(), HostError> {
        if !self.turn.live() {
            return Err(HostError::Closed);
        }
        identifier(&event.kind, "/type").map_err(HostError::InvalidEvent)?;
        let mut data = event.data;
        if !finite_json(&data) {
            return Err(HostError::InvalidEvent(ValidationError::new("/data", "a JSON value with finite numbers")));
        }
        drop_proto_keys(&mut data);
        let payload = json!({ "runtime": self.turn.provenance, "type": event.kind, "data": data });
        self.turn.events.emit(EventKind::RuntimeEvent, payload);
        Ok(())
    }

    /// States one fact about the turn for the result metadata. Never refused
    /// for host state: kept while draining, dropped silently after close.
    ///
    /// # Errors
    /// When the key is empty, `runtime` or `__proto__`, or the value is not JSON.
    pub fn annotate(&self, key: &str, value: Value) -> Result<(), HostError> {
        self.turn.annotations.annotate(key, value)
    }

    /// Fires when the turn takes nothing new (and whenever the hard signal fires).
    #[must_use]
    pub fn draining(&self) -> AbortSignal {
        self.draining.clone()
    }
}

fn finite_json(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
        Value::Array(items) => items.iter().all(finite_json),
        Value::Object(map) => map.values().all(finite_json),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    /// `finite_json` can only refuse something if a JSON number can be
    /// non-finite; with this workspace's serde_json (no `arbitrary_precision`)
    /// none can, so the check is a guard for that feature. If it is ever
    /// enabled, this fails and the check starts to matter.
    #[test]
    fn a_json_number_here_is_always_finite() {
        assert!(serde_json::from_str::<serde_json::Value>("1e400").is_err());
        assert!(serde_json::Number::from_f64(f64::NAN).is_none());
        assert!(serde_json::Number::from_f64(f64::INFINITY).is_none());
    }
}
