//! Naming the catalogue on a model's wire, where dots are not allowed.
//!
//! A wire name is the tool name with every `.` replaced by `_`. The mapping
//! must be exact in both directions, so a name that would not survive the
//! wire, or two names that would share one wire name, stop the turn before
//! the model is asked anything.

use sharedos_model::tool::ToolDefinition;
use std::borrow::Borrow;
use std::collections::BTreeMap;

/// Why the catalogue cannot be named on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolNameError {
    /// The wire form holds characters outside `[a-zA-Z0-9_-]` (or is empty).
    #[error("name tool {tool:?} on the model wire: {wire:?} is not [a-zA-Z0-9_-]+")]
    Unrepresentable {
        /// The catalogue name.
        tool: String,
        /// Its wire form.
        wire: String,
    },
    /// Two catalogue names share one wire form.
    #[error("name tools {first:?} and {second:?} apart on the model wire: both become {wire:?}")]
    Collision {
        /// The first catalogue name.
        first: String,
        /// The second catalogue name.
        second: String,
        /// The shared wire form.
        wire: String,
    },
}

/// The two-way map between catalogue names and wire names of one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolNameCodec {
    to_wire: BTreeMap<String, String>,
    from_wire: BTreeMap<String, String>,
}

/// The wire form of a tool name: dots become underscores.
#[must_use]
pub fn wire_name(tool: &str) -> String {
    tool.replace('.', "_")
}

fn is_wire_safe(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl ToolNameCodec {
    /// The codec of a catalogue.
    ///
    /// # Errors
    /// A name that cannot be written on the wire, or two names that collide.
    pub fn new<T: Borrow<ToolDefinition>>(tools: &[T]) -> Result<ToolNameCodec, ToolNameError> {
        let mut codec = ToolNameCodec::default();
        for tool in tools.iter().map(Borrow::borrow) {
            let wire = wire_name(&tool.name);
            if !is_wire_safe(&wire) {
                return Err(ToolNameError::Unrepresentable { tool: tool.name.clone(), wire });
            }
            if let Some(first) = codec.from_wire.get(&wire) {
                if first != &tool.name {
                    return Err(ToolNameError::Collision { first: first.clone(), second: tool.name.clone(), wire });
                }
            }
            codec.from_wire.insert(wire.clone(), tool.name.clone());
            codec.to_wire.insert(tool.name.clone(), wire);
        }
        Ok(codec)
    }

    /// The wire name of a catalogue name (names outside the catalogue are
    /// converted the same way).
    #[must_use]
    pub fn encode(&self, tool: &str) -> String {
        self.to_wire.get(tool).cloned().unwrap_or_else(|| wire_name(tool))
    }

    /// The catalogue name of a wire name. A name the model invented is
    /// decoded best-effort (underscores back to dots) so that it still
    /// reaches the envelope, which refuses it there.
    #[must_use]
    pub fn decode(&self, wire: &str) -> String {
        self.from_wire.get(wire).cloned().unwrap_or_else(|| wire.replace('_', "."))
    }
}
