//! The model client seam, and a client that replays a scripted
//! conversation.

use crate::model_wire::{ModelReply, ModelRequest};
use futures::future::LocalBoxFuture;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::cell::RefCell;
use std::collections::VecDeque;

/// Why a model call did not produce a reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelClientError {
    /// The signal fired first.
    #[error("hear from the model before the signal fired ({0:?})")]
    Aborted(AbortReason),
    /// A scripted conversation has no reply left.
    #[error("answer model call {call}: the script holds only {replies} replies")]
    ScriptSpent {
        /// The 1-based number of the call that found the script spent.
        call: usize,
        /// How many replies the script held.
        replies: usize,
    },
    /// The request failed or its answer could not be read. The provider's
    /// own text is not carried.
    #[error("complete the model request: {0}")]
    Request(String),
}

/// Asks a model for one reply.
pub trait ModelClient {
    /// One model call.
    ///
    /// # Errors
    /// [`ModelClientError::Aborted`] when `signal` fires first; otherwise why
    /// no reply was produced.
    fn complete(
        &self,
        request: ModelRequest,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<ModelReply, ModelClientError>>;
}

/// One scripted reply, optionally held back until a virtual instant.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedReply {
    /// Milliseconds after the client was built before the reply is given;
    /// `None` gives it at once.
    pub at_ms: Option<u64>,
    /// The reply.
    pub reply: ModelReply,
}

/// Replays supplied replies, one per call, and records every request. A
/// spent script is an error, so a turn that asks once too often fails
/// rather than completing.
#[derive(Debug)]
pub struct TranscriptModelClient {
    replies: RefCell<VecDeque<TimedReply>>,
    total: usize,
    requests: RefCell<Vec<ModelRequest>>,
    // On tokio's clock, so a paused clock makes a 116 s wait free.
    start: tokio::time::Instant,
}

impl Default for TranscriptModelClient {
    fn default() -> TranscriptModelClient {
        TranscriptModelClient::new(Vec::new())
    }
}

impl TranscriptModelClient {
    /// A client replaying `replies` in order, each at once.
    #[must_use]
    pub fn new(replies: Vec<ModelReply>) -> TranscriptModelClient {
        TranscriptModelClient::timed(replies.into_iter().map(|reply| TimedReply { at_ms: None, reply }).collect())
    }

    /// A client replaying `replies` in order, each no earlier than its
    /// instant after the client was built (a timed seat decision). Needs a
    /// tokio runtime with time enabled.
    #[must_use]
    pub fn timed(replies: Vec<TimedReply>) -> TranscriptModelClient {
        TranscriptModelClient {
            total: replies.len(),
            replies: RefCell::new(replies.into()),
            requests: RefCell::default(),
            start: tokio::time::Instant::now(),
        }
    }

    /// Every request made so far, in order.
    #[must_use]
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.borrow().clone()
    }

    /// Replies not yet replayed.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.replies.borrow().len()
    }
}

impl ModelClient for TranscriptModelClient {
    fn complete(
        &self,
        request: ModelRequest,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<ModelReply, ModelClientError>> {
        Box::pin(async move {
            if let Some(reason) = signal.reason() {
                return Err(ModelClientError::Aborted(reason));
            }
            self.requests.borrow_mut().push(request);
            let call = self.requests.borrow().len();
            let next = self.replies.borrow_mut().pop_front();
            let TimedReply { at_ms, reply } =
                next.ok_or(ModelClientError::ScriptSpent { call, replies: self.total })?;
            if let Some(ms) = at_ms {
                let due = self.start + std::time::Duration::from_millis(ms);
                tokio::select! {
                    () = tokio::time::sleep_until(due) => {}
                    () = signal.aborted() => {
                        return Err(ModelClientError::Aborted(signal.reason().unwrap_or(AbortReason::TurnClosed)));
                    }
                }
            }
            Ok(reply)
        })
    }
}
