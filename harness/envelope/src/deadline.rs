//! The turn's two signals: the hard stop and the soft "take nothing new".
//!
//! The hard signal fires on host cancellation (at once, with the host's
//! reason), at `timeoutMs`, or when the envelope aborts it. The soft signal
//! (`draining`) fires at `timeoutMs − grace` when a grace is configured,
//! whenever the hard one fires, or when an audit outage drains the turn.
//! Timers are tokio sleeps driven on the turn's [`TaskSet`], so under a
//! paused clock a two-minute deadline costs nothing.

use crate::tasks::TaskSet;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// The deadline pair of one turn.
#[derive(Debug, Clone)]
pub struct TurnDeadlines {
    hard: AbortSignal,
    soft: AbortSignal,
    host: Option<AbortSignal>,
    grace_ms: u64,
    tasks: TaskSet,
    state: Rc<DeadlineState>,
}

#[derive(Debug, Default)]
struct DeadlineState {
    disposed: Cell<bool>,
    grace_timer_armed: Cell<bool>,
    armed: Cell<usize>,
    // Fired by `dispose`; every timer listens to it and stops early.
    cleared: AbortSignal,
}

impl TurnDeadlines {
    /// Creates the pair and arms its timers on `tasks`.
    ///
    /// The hard→soft link is registered before anything else can observe
    /// either signal, and a host signal that already fired aborts both at once.
    #[must_use]
    pub fn start(host: Option<&AbortSignal>, timeout_ms: u64, grace_ms: u64, tasks: &TaskSet) -> TurnDeadlines {
        let hard = AbortSignal::new();
        let soft = AbortSignal::new();
        hard.forward_to(&soft, Some(AbortReason::Draining));
        let pair = TurnDeadlines {
            hard,
            soft,
            host: host.cloned(),
            grace_ms,
            tasks: tasks.clone(),
            state: Rc::new(DeadlineState::default()),
        };
        if let Some(host) = host {
            host.forward_to(&pair.hard, None);
        }
        if grace_ms >= timeout_ms {
            // The soft deadline is already due: fire it now rather than on the
            // first timer poll, so no call can slip past it.
            pair.soft.abort(AbortReason::Draining);
        } else if grace_ms > 0 {
            pair.arm(timeout_ms.saturating_sub(grace_ms), pair.soft.clone(), AbortReason::Draining);
        }
        pair.arm(timeout_ms, pair.hard.clone(), AbortReason::Timeout);
        pair
    }

    /// The hard signal: handed to `run` and to every kernel call.
    #[must_use]
    pub fn hard(&self) -> &AbortSignal {
        &self.hard
    }

    /// The soft signal (`RuntimeHost::draining`).
    #[must_use]
    pub fn soft(&self) -> &AbortSignal {
        &self.soft
    }

    /// Stops taking new work because of `reason` (an audit outage): the soft
    /// signal fires now, the hard one after the grace (at once without one).
    /// The hard deadline keeps running, so the stop is the earlier of both.
    pub fn drain(&self, reason: AbortReason) {
        self.soft.abort(AbortReason::Draining);
        if self.grace_ms == 0 {
            self.hard.abort(reason);
            return;
        }
        if self.hard.is_aborted() || self.state.disposed.get() || self.state.grace_timer_armed.get() {
            return;
        }
        self.state.grace_timer_armed.set(true);
        self.arm(self.grace_ms, self.hard.clone(), reason);
    }

    /// Aborts the hard signal (and so the soft one) with `reason`.
    pub fn abort(&self, reason: AbortReason) {
        self.hard.abort(reason);
    }

    /// Clears every timer and detaches from the host signal; afterwards
    /// `drain` arms nothing and a host abort no longer reaches the turn.
    pub fn dispose(&self) {
        self.state.disposed.set(true);
        self.state.cleared.abort(AbortReason::TurnClosed);
        self.state.armed.set(0);
        if let Some(host) = &self.host {
            host.stop_forwarding(&self.hard);
        }
    }

    /// How many timers are still armed (zero after `dispose`).
    #[must_use]
    pub fn armed_timers(&self) -> usize {
        self.state.armed.get()
    }

    fn arm(&self, after_ms: u64, target: AbortSignal, reason: AbortReason) {
        let state = self.state.clone();
        state.armed.set(state.armed.get() + 1);
        self.tasks.spawn(async move {
            let cleared = state.cleared.clone();
            tokio::select! {
                biased;
                () = cleared.aborted() => {}
                () = tokio::time::sleep(Duration::from_millis(after_ms)) => target.abort(reason),
            }
            if !state.disposed.get() {
                state.armed.set(state.armed.get().saturating_sub(1));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A drain arms the grace timer once, and never on a pair whose hard
    /// signal already fired or that was disposed: a timer armed then would
    /// outlive the turn.
    #[test]
    fn a_drain_arms_one_grace_timer_and_none_once_stopped_or_disposed() {
        let tasks = TaskSet::new();
        let pair = TurnDeadlines::start(None, 10_000, 5_000, &tasks);
        assert_eq!(pair.armed_timers(), 2, "the soft and the hard deadline");
        pair.drain(AbortReason::Draining);
        assert_eq!(pair.armed_timers(), 3);
        pair.drain(AbortReason::Draining);
        assert_eq!(pair.armed_timers(), 3, "a second drain arms no second timer");

        let stopped = TurnDeadlines::start(None, 10_000, 5_000, &tasks);
        stopped.hard().abort(AbortReason::Timeout);
        stopped.drain(AbortReason::Draining);
        assert_eq!(stopped.armed_timers(), 2, "nothing is armed after the hard signal");

        let disposed = TurnDeadlines::start(None, 10_000, 5_000, &tasks);
        disposed.dispose();
        disposed.drain(AbortReason::Draining);
        assert_eq!(disposed.armed_timers(), 0, "nothing is armed after disposal");
    }
}
