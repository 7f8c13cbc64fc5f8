//! Abort signals shared by the envelope, the kernel and tool handlers.
//!
//! A signal fires once, keeps the reason it fired with, and can be awaited.
//! Everything runs on one current-thread runtime per cell, so the shared
//! state is `Rc`-based.

use crate::error::AuditUnavailable;
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

/// A one-shot, awaitable abort signal. Clones share state.
#[derive(Debug, Clone, Default)]
pub struct AbortSignal {
    token: CancellationToken,
    reason: Rc<RefCell<Option<AbortReason>>>,
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
        *self.reason.borrow_mut() = Some(reason);
        self.token.cancel();
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
