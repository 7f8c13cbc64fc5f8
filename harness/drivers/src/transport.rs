//! The transport contract: how the eval driver reaches a harness.
//!
//! A [`HarnessTransport`] opens one [`HarnessChannel`] per turn. A channel
//! carries vendor frames both ways: the harness's frames are read one at a
//! time, and tool results are written back. A recorded transcript and a live
//! child process both implement it.
//!
//! Everything runs on one current-thread runtime, so the futures are
//! `LocalBoxFuture`s, methods take `&self` (implementations keep their state
//! behind `RefCell`/`Cell`), and signals are passed by value (clones share
//! state).

use crate::frame::{HarnessFrame, HarnessTurnRequest};
use futures::future::LocalBoxFuture;
use sharedos_port::signal::{AbortReason, AbortSignal};

/// Why a transport or channel call did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The signal handed to the call fired first; carries its reason.
    #[error("reach the harness before the signal fired ({0:?})")]
    Aborted(AbortReason),
    /// The harness could not be started (spawn failure, missing executable).
    #[error("start the harness: {0}")]
    NotStarted(String),
    /// Reading from or writing to the harness broke.
    #[error("exchange frames with the harness: {0}")]
    Io(String),
    /// The channel was already closed.
    #[error("use the channel: it is already closed")]
    Closed,
    /// The transport was handed something it cannot serve.
    #[error("open the transport: {0}")]
    Invalid(String),
}

/// One open turn with a harness.
pub trait HarnessChannel {
    /// The next frame, or `None` once the harness has finished speaking
    /// (or is waiting for a result it has not been given).
    ///
    /// # Errors
    /// [`TransportError::Aborted`] when `signal` fires while waiting; any
    /// other variant when the channel broke.
    fn read(&self, signal: AbortSignal) -> LocalBoxFuture<'_, Result<Option<HarnessFrame>, TransportError>>;

    /// Hands one frame (a tool result) to the harness.
    ///
    /// # Errors
    /// [`TransportError::Aborted`] when `signal` fires first; any other
    /// variant when the frame could not be delivered.
    fn write(&self, frame: HarnessFrame, signal: AbortSignal) -> LocalBoxFuture<'_, Result<(), TransportError>>;

    /// Ends the turn on the channel. Closing twice is harmless.
    ///
    /// # Errors
    /// When releasing the channel's resources broke; callers may ignore it.
    fn close(&self) -> LocalBoxFuture<'_, Result<(), TransportError>>;
}

/// Opens channels to a harness, one per turn.
pub trait HarnessTransport {
    /// Opens a channel for one turn; the request is the first thing the
    /// harness is told.
    ///
    /// # Errors
    /// [`TransportError::Aborted`] when `signal` fires first; otherwise why
    /// the harness could not be reached.
    fn open(
        &self,
        request: HarnessTurnRequest,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn HarnessChannel>, TransportError>>;
}
