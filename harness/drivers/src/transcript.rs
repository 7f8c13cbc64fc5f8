//! A supplied conversation: the transport behind every scripted column.
//!
//! A transcript is a list of batches of frames. The first batch is readable
//! as soon as a channel opens; each later batch is unlocked by one written
//! result, so the harness "waits" for the driver exactly where a real CLI
//! would wait for a tool result. A spent batch with nothing unlocked reads
//! as the end of frames, which the driver reports as
//! `harness_ended_without_outcome`.
//!
//! A frame may carry a virtual instant ([`TimedFrame::at_ms`], milliseconds
//! from the moment the channel opened, which is the turn's start as the
//! transport sees it). Reading such a frame first sleeps on the tokio clock
//! until that instant, so under a paused clock a rule-family row such as
//! "the seat asks for a transfer at 116 s" runs through every codec without
//! real waiting. An instant already passed delivers at once.

use crate::frame::{HarnessFrame, HarnessTurnRequest};
use crate::transport::{HarnessChannel, HarnessTransport, TransportError};
use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;
use tokio::time::Instant;

/// One frame of a batch, optionally held back until a virtual instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimedFrame {
    /// Milliseconds after the channel opened before the frame is readable;
    /// `None` delivers it as soon as it is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// The frame, in the vendor's own shape.
    pub frame: HarnessFrame,
}

impl TimedFrame {
    /// A frame delivered as soon as it is reached.
    #[must_use]
    pub fn now(frame: HarnessFrame) -> TimedFrame {
        TimedFrame { at_ms: None, frame }
    }

    /// A frame delivered no earlier than `at_ms` after the channel opened.
    #[must_use]
    pub fn at(at_ms: u64, frame: HarnessFrame) -> TimedFrame {
        TimedFrame { at_ms: Some(at_ms), frame }
    }
}

impl From<HarnessFrame> for TimedFrame {
    fn from(frame: HarnessFrame) -> TimedFrame {
        TimedFrame::now(frame)
    }
}

/// Why a transcript could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptError {
    /// A transcript needs a first batch, readable at open.
    #[error("build a transcript: it has no batch")]
    NoBatches,
}

/// A recorded conversation served to every turn that opens on it.
///
/// Clones share the batches and the `written` and `opened` logs, so a test
/// can keep one clone while the driver owns another.
#[derive(Debug, Clone)]
pub struct TranscriptTransport {
    batches: Rc<Vec<Vec<TimedFrame>>>,
    written: Rc<RefCell<Vec<HarnessFrame>>>,
    opened: Rc<RefCell<Vec<HarnessTurnRequest>>>,
}

impl TranscriptTransport {
    /// A transport over `batches`.
    ///
    /// # Errors
    /// [`TranscriptError::NoBatches`] when `batches` is empty.
    pub fn new(batches: Vec<Vec<TimedFrame>>) -> Result<TranscriptTransport, TranscriptError> {
        if batches.is_empty() {
            return Err(TranscriptError::NoBatches);
        }
        Ok(TranscriptTransport { batches: Rc::new(batches), written: Rc::default(), opened: Rc::default() })
    }

    /// A transport over untimed frames.
    ///
    /// # Errors
    /// [`TranscriptError::NoBatches`] when `batches` is empty.
    pub fn from_frames(batches: Vec<Vec<HarnessFrame>>) -> Result<TranscriptTransport, TranscriptError> {
        TranscriptTransport::new(
            batches.into_iter().map(|batch| batch.into_iter().map(TimedFrame::now).collect()).collect(),
        )
    }

    /// The batches, as supplied.
    #[must_use]
    pub fn batches(&self) -> &[Vec<TimedFrame>] {
        &self.batches
    }

    /// Every frame written on any channel of this transport, in order.
    #[must_use]
    pub fn written(&self) -> Vec<HarnessFrame> {
        self.written.borrow().clone()
    }

    /// Every turn request a channel was opened with, in order.
    #[must_use]
    pub fn opened(&self) -> Vec<HarnessTurnRequest> {
        self.opened.borrow().clone()
    }
}

impl HarnessTransport for TranscriptTransport {
    fn open(
        &self,
        request: HarnessTurnRequest,
        _signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn HarnessChannel>, TransportError>> {
        self.opened.borrow_mut().push(request);
        let channel = TranscriptChannel {
            batches: Rc::clone(&self.batches),
            written: Rc::clone(&self.written),
            opened_at: Instant::now(),
            batch: Cell::new(0),
            frame: Cell::new(0),
            unlocked: Cell::new(0),
        };
        Box::pin(async move { Ok(Box::new(channel) as Box<dyn HarnessChannel>) })
    }
}

/// One turn over a transcript: a cursor into the shared batches.
#[derive(Debug)]
struct TranscriptChannel {
    batches: Rc<Vec<Vec<TimedFrame>>>,
    written: Rc<RefCell<Vec<HarnessFrame>>>,
    opened_at: Instant,
    batch: Cell<usize>,
    frame: Cell<usize>,
    /// Results written and not yet spent on moving to the next batch.
    unlocked: Cell<usize>,
}

impl TranscriptChannel {
    /// The next frame without consuming it, moving past spent batches that
    /// a written result has unlocked.
    fn peek(&self) -> Option<&TimedFrame> {
        loop {
            let batch = self.batches.get(self.batch.get())?;
            if let Some(timed) = batch.get(self.frame.get()) {
                return Some(timed);
            }
            if self.unlocked.get() == 0 {
                return None;
            }
            self.unlocked.set(self.unlocked.get() - 1);
            self.batch.set(self.batch.get() + 1);
            self.frame.set(0);
        }
    }

    async fn read_frame(&self, signal: AbortSignal) -> Result<Option<HarnessFrame>, TransportError> {
        loop {
            let Some(timed) = self.peek() else { return Ok(None) };
            let Some(at_ms) = timed.at_ms else {
                let frame = timed.frame.clone();
                self.frame.set(self.frame.get() + 1);
                return Ok(Some(frame));
            };
            let position = (self.batch.get(), self.frame.get());
            let due = self.opened_at + Duration::from_millis(at_ms);
            tokio::select! {
                biased;
                () = signal.aborted() => {
                    return Err(TransportError::Aborted(signal.reason().unwrap_or(AbortReason::HostCancelled)));
                }
                () = tokio::time::sleep_until(due) => {}
            }
            // Another read on this channel may have taken the frame while
            // this one slept; positions only move forward, so an unchanged
            // position means it is still there.
            if position == (self.batch.get(), self.frame.get()) {
                if let Some(timed) = self.peek() {
                    let frame = timed.frame.clone();
                    self.frame.set(self.frame.get() + 1);
                    return Ok(Some(frame));
                }
            }
        }
    }
}

impl HarnessChannel for TranscriptChannel {
    fn read(&self, signal: AbortSignal) -> LocalBoxFuture<'_, Result<Option<HarnessFrame>, TransportError>> {
        Box::pin(self.read_frame(signal))
    }

    fn write(&self, frame: HarnessFrame, _signal: AbortSignal) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        self.written.borrow_mut().push(frame);
        self.unlocked.set(self.unlocked.get() + 1);
        Box::pin(async { Ok(()) })
    }

    fn close(&self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }
}
