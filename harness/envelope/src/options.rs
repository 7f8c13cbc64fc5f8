//! Executor construction options, the injected clock and id factory.

use crate::error::{ConstructionError, TurnError};
use sharedos_model::execution::{ExecutionEvent, MAX_EXECUTION_TIMEOUT_MS, MAX_EXECUTION_TOOL_CALLS};
use sharedos_model::instant::Instant;
use sharedos_port::signal::AbortSignal;
use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

/// Default step budget.
pub const DEFAULT_MAX_STEPS: u32 = 16;
/// Default deadline in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest drain grace the executor accepts.
pub const MAX_DRAIN_GRACE_MS: u64 = 600_000;
/// Where [`VirtualClock::default`] starts.
pub const DEFAULT_EPOCH: &str = "2026-01-01T00:00:00.000Z";

/// The envelope's clock: the current instant as an RFC 3339 string.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> String;
}

impl<F: Fn() -> String> Clock for F {
    fn now(&self) -> String {
        self()
    }
}

/// Mints event ids.
pub trait IdFactory {
    /// A fresh identifier.
    fn next_id(&self) -> String;
}

impl<F: Fn() -> String> IdFactory for F {
    fn next_id(&self) -> String {
        self()
    }
}

/// A clock that reads tokio's (virtual) time: a fixed start instant plus the
/// milliseconds elapsed on `tokio::time::Instant` since construction. Under
/// a paused runtime it advances only when virtual time does.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    start: Instant,
    origin: tokio::time::Instant,
}

impl VirtualClock {
    /// A clock reading `start` now.
    #[must_use]
    pub fn starting_at(start: Instant) -> VirtualClock {
        VirtualClock { start, origin: tokio::time::Instant::now() }
    }

    /// A clock reading the RFC 3339 instant `start` now; `None` if it does not parse.
    #[must_use]
    pub fn parse(start: &str) -> Option<VirtualClock> {
        Instant::parse(start).map(VirtualClock::starting_at)
    }

    /// The current instant.
    #[must_use]
    pub fn instant(&self) -> Instant {
        let elapsed = tokio::time::Instant::now().saturating_duration_since(self.origin);
        self.start.plus_millis(i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
    }
}

impl Default for VirtualClock {
    fn default() -> VirtualClock {
        VirtualClock::starting_at(Instant::parse(DEFAULT_EPOCH).unwrap_or(Instant(0)))
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> String {
        self.instant().to_rfc3339()
    }
}

/// Ids `prefix-1`, `prefix-2`, ... in mint order.
#[derive(Debug, Clone)]
pub struct SequentialIds {
    prefix: String,
    next: Rc<Cell<u64>>,
}

impl SequentialIds {
    /// A factory whose first id is `prefix-1`.
    #[must_use]
    pub fn new(prefix: &str) -> SequentialIds {
        SequentialIds { prefix: prefix.to_string(), next: Rc::new(Cell::new(1)) }
    }
}

impl IdFactory for SequentialIds {
    fn next_id(&self) -> String {
        let n = self.next.get();
        self.next.set(n.saturating_add(1));
        format!("{}-{n}", self.prefix)
    }
}

/// Which turn a contained error belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnErrorContext {
    /// The turn's execution id.
    pub execution_id: String,
    /// Its trace.
    pub trace_id: String,
}

/// Host-side diagnostic hook for contained throws (never called for a cancelled turn).
pub type TurnErrorHook = Rc<dyn Fn(&TurnError, &TurnErrorContext)>;
/// Synchronous, observational event hook.
pub type EventHook = Rc<dyn Fn(&ExecutionEvent)>;

/// How the executor is built.
#[derive(Clone)]
pub struct ExecutorOptions {
    /// The envelope's clock.
    pub clock: Rc<dyn Clock>,
    /// Event id factory.
    pub create_id: Rc<dyn IdFactory>,
    /// Step budget when the request states none (positive; no upper bound).
    pub default_max_steps: u32,
    /// Tool-call budget when the request states none (1..=10,000); absent
    /// means the resolved step budget.
    pub default_max_tool_calls: Option<u32>,
    /// Deadline when the request states none (1..=600,000).
    pub default_timeout_ms: u64,
    /// How long before the deadline the turn stops taking new calls, and how
    /// long an audit outage lets in-flight calls finish (0..=600,000).
    pub drain_grace_ms: u64,
    /// Receives contained throws.
    pub on_turn_error: Option<TurnErrorHook>,
    /// Sees every event of every turn, after the per-call observer.
    pub on_event: Option<EventHook>,
}

impl Default for ExecutorOptions {
    fn default() -> ExecutorOptions {
        ExecutorOptions {
            clock: Rc::new(VirtualClock::default()),
            create_id: Rc::new(SequentialIds::new("event")),
            default_max_steps: DEFAULT_MAX_STEPS,
            default_max_tool_calls: None,
            default_timeout_ms: DEFAULT_TIMEOUT_MS,
            drain_grace_ms: 0,
            on_turn_error: None,
            on_event: None,
        }
    }
}

impl fmt::Debug for ExecutorOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecutorOptions")
            .field("default_max_steps", &self.default_max_steps)
            .field("default_max_tool_calls", &self.default_max_tool_calls)
            .field("default_timeout_ms", &self.default_timeout_ms)
            .field("drain_grace_ms", &self.drain_grace_ms)
            .finish_non_exhaustive()
    }
}

impl ExecutorOptions {
    /// Checks every numeric option's range (negative and fractional values
    /// are already unrepresentable in the option types).
    ///
    /// # Errors
    /// The first option out of range.
    pub fn validate(&self) -> Result<(), ConstructionError> {
        if self.default_max_steps == 0 {
            return Err(invalid("defaultMaxSteps", "a positive integer"));
        }
        if let Some(calls) = self.default_max_tool_calls {
            if calls == 0 || calls > MAX_EXECUTION_TOOL_CALLS {
                return Err(invalid("defaultMaxToolCalls", "an integer from 1 to 10000"));
            }
        }
        if self.default_timeout_ms == 0 || self.default_timeout_ms > MAX_EXECUTION_TIMEOUT_MS {
            return Err(invalid("defaultTimeoutMs", "an integer from 1 to 600000"));
        }
        if self.drain_grace_ms > MAX_DRAIN_GRACE_MS {
            return Err(invalid("drainGraceMs", "an integer from 0 to 600000"));
        }
        Ok(())
    }
}

fn invalid(option: &str, expected: &str) -> ConstructionError {
    ConstructionError::InvalidOption { option: option.to_string(), expected: expected.to_string() }
}

/// Per-call options of `execute`.
#[derive(Clone, Default)]
pub struct ExecuteOptions {
    /// The host's cancellation signal; it stops the turn at once, never drains.
    pub signal: Option<AbortSignal>,
    /// Sees each event as it is appended; cannot change the outcome.
    pub on_event: Option<EventHook>,
}

impl fmt::Debug for ExecuteOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExecuteOptions")
            .field("signal", &self.signal)
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}
