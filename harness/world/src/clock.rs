//! The world clock (R64): frozen, or operation-indexed when a
//! condition arms it. Instants are a function of the moves and the world only.

use super::constants::STEP_MS;
use sharedos_model::audit::{AuditEvent, AuditType};
use sharedos_model::instant::Instant;
use std::cell::Cell;
use std::rc::Rc;

/// How the clock moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockMode {
    /// Always reads the base instant.
    Frozen,
    /// Reads base + one step per `tool.invoked` audit record seen.
    Operations,
}

/// A shared, deterministic clock. Clones share the operation count.
#[derive(Debug, Clone)]
pub struct WorldClock {
    base: Instant,
    mode: ClockMode,
    operations: Rc<Cell<u64>>,
}

impl WorldClock {
    /// A clock frozen at `base`.
    #[must_use]
    pub fn frozen(base: Instant) -> WorldClock {
        WorldClock { base, mode: ClockMode::Frozen, operations: Rc::new(Cell::new(0)) }
    }

    /// A clock that advances one step per tool operation the audit log records,
    /// so call k is stamped `base + (k-1)` steps; admission and listing do not move it.
    #[must_use]
    pub fn operation_indexed(base: Instant) -> WorldClock {
        WorldClock { base, mode: ClockMode::Operations, operations: Rc::new(Cell::new(0)) }
    }

    /// The mode.
    #[must_use]
    pub fn mode(&self) -> ClockMode {
        self.mode
    }

    /// The current instant.
    #[must_use]
    pub fn instant(&self) -> Instant {
        match self.mode {
            ClockMode::Frozen => self.base,
            ClockMode::Operations => {
                let steps = i64::try_from(self.operations.get()).unwrap_or(i64::MAX);
                self.base.plus_millis(steps.saturating_mul(STEP_MS))
            }
        }
    }

    /// The current instant as the wire writes it.
    #[must_use]
    pub fn now(&self) -> String {
        self.instant().to_rfc3339()
    }

    /// Tool operations counted so far (counted in both modes, read only when moving).
    #[must_use]
    pub fn operations(&self) -> u64 {
        self.operations.get()
    }

    /// Feeds one recorded audit event; only `tool.invoked` moves the clock.
    pub fn observe(&self, event: &AuditEvent) {
        if event.kind == AuditType::ToolInvoked {
            self.operations.set(self.operations.get().saturating_add(1));
        }
    }

    /// An audit observer bound to this clock.
    #[must_use]
    pub fn observer(&self) -> Rc<dyn Fn(&AuditEvent)> {
        let clock = self.clone();
        Rc::new(move |event: &AuditEvent| clock.observe(event))
    }
}
