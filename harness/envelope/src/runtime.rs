//! The runtime plugin seam: what a runtime implements to be seated in the
//! envelope.
//!
//! ```
//! use futures::future::LocalBoxFuture;
//! use sharedos_envelope::host::RuntimeHost;
//! use sharedos_envelope::error::RuntimeFailure;
//! use sharedos_envelope::runtime::{complete, RuntimePlugin};
//! use sharedos_port::signal::AbortSignal;
//! use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
//! use std::rc::Rc;
//!
//! struct Echo;
//!
//! impl RuntimePlugin for Echo {
//!     fn manifest(&self) -> RuntimeManifest {
//!         RuntimeManifest { id: "echo".into(), version: "1".into(), protocol_version: "1".into(), metadata: None }
//!     }
//!     fn run<'a>(&'a self, request: Rc<RuntimeTurnRequest>, _host: RuntimeHost, _signal: AbortSignal)
//!         -> LocalBoxFuture<'a, Result<serde_json::Value, RuntimeFailure>> {
//!         Box::pin(async move { Ok(complete(request.message.payload.clone())) })
//!     }
//! }
//! ```

use crate::error::RuntimeFailure;
use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnOutcome, RuntimeTurnRequest};
use sharedos_model::tool::ProtocolError;
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;

use crate::host::RuntimeHost;

/// A replaceable runtime. Keep per-turn state inside `run`; the envelope may
/// run several turns of one plugin concurrently.
pub trait RuntimePlugin {
    /// Who the runtime is; validated once when the executor is built.
    fn manifest(&self) -> RuntimeManifest;

    /// Runs one turn. `signal` is the turn's hard signal; `host` is the only
    /// way to cause an effect. The outcome is raw JSON so that a malformed
    /// one can be returned (and is then ended `invalid_runtime_outcome`);
    /// build well-formed ones with [`complete`], [`fail`] and [`escalate`].
    ///
    /// # Errors
    /// An `Err` is "the runtime threw": the turn ends `runtime_failed`, or
    /// `turn_cancelled` when the turn was draining.
    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>>;
}

/// The JSON of a well-formed outcome.
#[must_use]
pub fn outcome_value(outcome: &RuntimeTurnOutcome) -> Value {
    serde_json::to_value(outcome).unwrap_or(Value::Null)
}

/// `{type: "complete", output}`.
#[must_use]
pub fn complete(output: Value) -> Value {
    outcome_value(&RuntimeTurnOutcome::Complete { output, metadata: None })
}

/// `{type: "fail", error}`.
#[must_use]
pub fn fail(error: ProtocolError) -> Value {
    outcome_value(&RuntimeTurnOutcome::Fail { error, metadata: None })
}

/// `{type: "escalate", reason}`.
#[must_use]
pub fn escalate(reason: &str) -> Value {
    outcome_value(&RuntimeTurnOutcome::Escalate { reason: reason.to_string(), metadata: None })
}

/// The same outcome JSON with `metadata` attached.
#[must_use]
pub fn with_metadata(mut outcome: Value, metadata: Map<String, Value>) -> Value {
    if let Value::Object(map) = &mut outcome {
        map.insert("metadata".to_string(), Value::Object(metadata));
    }
    outcome
}
