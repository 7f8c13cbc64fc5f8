//! Abort signals shared by the envelope, the kernel and tool handlers.
//!
//! A signal fires once, keeps the reason it fired with, and can be awaited.
//! Everything runs on one current-thread runtime per cell, so the shared
//! state is `Rc`-based.

use crate::audit::AuditUnavailable;
use std::cell::RefCell;
use std::rc::Rc;
use tokio_util::sync::CancellationToken;

/// Why a signal fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AbortReason {
    /// The turn's deadline passed.
    Timeout,
    /// The host cancelled the turn.
    HostCancelled,
    /// The envelope closed the turn.
    TurnClosed,
    /// The turn takes nothing new (the soft signal's only reason).
    Draining,
    /// A pre-effect audit write failed and the turn is being stopped.
    AuditOutage(AuditUnavailable),
}

/// A signal to fire along with another, and the fixed reason to fire it with.
type Forward = (AbortSignal, Option<AbortReason>);

/// A one-shot, awaitable abort signal. Clones share state.
#[derive(Debug, Clone, Default)]
pub struct AbortSignal {
    token: CancellationToken,
    reason: Rc<RefCell<Option<AbortReason>>>,
    /// Signals that fire when this one does: with their own fixed reason,
    /// or (`None`) with this signal's reason.
    forwards: Rc<RefCell<Vec<Forward>>>,
}

impl AbortSignal {
    /// A signal that has not fired.
    #[must_use]
    pub fn new() -> AbortSignal {
        AbortSignal::default()
    }

    /// Fires with `reason`; a signal that already fired keeps its first reason.
    pub fn abort(&self, reason: AbortReason) {
        if self.reason.borrow().is_some() {
            return;
        }
        *self.reason.borrow_mut() = Some(reason.clone());
        // Forwarded signals fire before any waiter of this one is woken, so
        // no observer sees this signal fired and a forwarded one not.
        let forwards = std::mem::take(&mut *self.forwards.borrow_mut());
        for (target, fixed) in forwards {
            target.abort(fixed.unwrap_or_else(|| reason.clone()));
        }
        self.token.cancel();
    }

    /// Makes `target` fire whenever this signal fires: with `reason` if
    /// given, else with this signal's own reason. If this signal has already
    /// fired, `target` fires at once.
    pub fn forward_to(&self, target: &AbortSignal, reason: Option<AbortReason>) {
        let fired = self.reason();
        match fired {
            Some(own) => target.abort(reason.unwrap_or(own)),
            None => self.forwards.borrow_mut().push((target.clone(), reason)),
        }
    }

    /// Undoes every [`AbortSignal::forward_to`] from this signal to `target`.
    pub fn stop_forwarding(&self, target: &AbortSignal) {
        self.forwards.borrow_mut().retain(|(t, _)| !t.same_as(target));
    }

    /// Whether `other` is a clone of this very signal.
    #[must_use]
    pub fn same_as(&self, other: &AbortSignal) -> bool {
        Rc::ptr_eq(&self.reason, &other.reason)
    }

    /// Whether it has fired.
    #[must_use]
    pub fn is_aborted(&self) -> bool {
        self.reason.borrow().is_some()
    }

    /// The reason it fired with.
    #[must_use]
    pub fn reason(&self) -> Option<AbortReason> {
        self.reason.borrow().clone()
    }

    /// Resolves once the signal has fired.
    pub async fn aborted(&self) {
        self.token.cancelled().await;
    }
}
