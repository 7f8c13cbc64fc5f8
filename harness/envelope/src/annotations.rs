//! What a runtime states for the record (`annotate`), and how result
//! metadata is merged: outcome metadata < annotations < `runtime`.

use crate::error::HostError;
use serde_json::{Map, Value};
use sharedos_model::validate::drop_proto_keys;
use std::cell::{Cell, RefCell};

/// The metadata key the envelope reserves for its own provenance.
pub const RUNTIME_KEY: &str = "runtime";

/// The turn's annotations, in first-write order, last write winning.
#[derive(Debug, Default)]
pub(crate) struct Annotations {
    entries: RefCell<Vec<(String, Value)>>,
    closed: Cell<bool>,
}

impl Annotations {
    /// Validates and stores one fact. Validation comes first, so an invalid
    /// write is refused even after close; a valid one after close is dropped.
    pub(crate) fn annotate(&self, key: &str, value: Value) -> Result<(), HostError> {
        if key.is_empty() || key == RUNTIME_KEY || key == "__proto__" {
            return Err(HostError::InvalidAnnotationKey(key.to_string()));
        }
        let value = json_value(value)?;
        if self.closed.get() {
            return Ok(());
        }
        let mut entries = self.entries.borrow_mut();
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => entries.push((key.to_string(), value)),
        }
        Ok(())
    }

    /// Later writes are dropped silently.
    pub(crate) fn close(&self) {
        self.closed.set(true);
    }

    /// Builds result metadata: `outcome` < annotations < `runtime`.
    pub(crate) fn merge(&self, outcome: Option<&Map<String, Value>>, runtime: &Value) -> Map<String, Value> {
        let mut metadata = outcome.cloned().unwrap_or_default();
        for (key, value) in self.entries.borrow().iter() {
            metadata.insert(key.clone(), value.clone());
        }
        metadata.insert(RUNTIME_KEY.to_string(), runtime.clone());
        metadata
    }
}

/// Checks a value is JSON the contract accepts; nested `__proto__` keys are
/// dropped, as SharedOS's schema does.
fn json_value(mut value: Value) -> Result<Value, HostError> {
    // serde_json cannot hold NaN, infinities, functions or undefined, so the
    // remaining check is that numbers are finite when read back as floats.
    if !finite(&value) {
        return Err(HostError::InvalidAnnotationValue("a JSON value with finite numbers".into()));
    }
    drop_proto_keys(&mut value);
    Ok(value)
}

fn finite(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
        Value::Array(items) => items.iter().all(finite),
        Value::Object(map) => map.values().all(finite),
        _ => true,
    }
}
