//! A live CLI over stdio: [`ChildProcessTransport`] starts one process per
//! turn and speaks JSON lines with it.
//!
//! Two modes ([`ChildMode`]) cover what a live CLI needs:
//! - **answer**: the harness speaks SharedOS's eval protocol; tool calls
//!   are asked of the driver and its results are written on stdin;
//! - **observe**: a real vendor CLI runs its calls itself; the transport
//!   only reads, and results written by the driver are dropped and counted.
//!
//! Both are bounded ([`ProcessLimits`]): a deadline that kills the whole
//! process group, a cap on line size (a longer line is skipped without
//! being buffered), a cap on lines that are not frames, a fixed-size tail
//! of stderr, a bounded read-ahead of frames, and a disposal that always
//! reaps the child. The child sees only the environment variables its
//! [`Launch`] names — unlike SharedOS, nothing ambient leaks in.
//!
//! The channel ends when stdout closes or the process exits; every read
//! after that gives no frame, which the driver reports as
//! `harness_ended_without_outcome`. A deadline or the ignored-line cap ends
//! it with an error instead, and the open signal with the abort.

pub mod diagnostics;
pub mod launch;
pub mod lines;
pub mod process;
mod pump;
pub mod splitter;

pub use diagnostics::{ChannelEnd, DiagnosticsLog, ExitReport, ProcessDiagnostics};
pub use launch::{ChildMode, Launch, ProcessLimits};
pub use lines::SkippedLine;
pub use process::HarnessProcess;

use crate::frame::{HarnessFrame, HarnessTurnRequest};
use crate::transport::{HarnessChannel, HarnessTransport, TransportError};
use futures::future::LocalBoxFuture;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

/// Builds the frames written when a turn opens: none, one, or several (a
/// handshake), in order.
pub type OpeningFrames = Rc<dyn Fn(&HarnessTurnRequest) -> Vec<HarnessFrame>>;

/// Starts a live CLI for each turn.
///
/// Clones share the launch, the opening-frame builder and the diagnostics
/// of every process started.
#[derive(Clone)]
pub struct ChildProcessTransport {
    launch: Launch,
    opening: Option<OpeningFrames>,
    processes: Rc<RefCell<Vec<DiagnosticsLog>>>,
}

impl fmt::Debug for ChildProcessTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildProcessTransport")
            .field("launch", &self.launch)
            .field("opening", &self.opening.is_some())
            .field("processes", &self.processes.borrow().len())
            .finish()
    }
}

impl ChildProcessTransport {
    /// A transport starting `launch` for every turn, with no opening frame.
    #[must_use]
    pub fn new(launch: Launch) -> ChildProcessTransport {
        ChildProcessTransport { launch, opening: None, processes: Rc::default() }
    }

    /// Sets the builder of the opening frames.
    #[must_use]
    pub fn with_opening(mut self, opening: impl Fn(&HarnessTurnRequest) -> Vec<HarnessFrame> + 'static) -> Self {
        self.opening = Some(Rc::new(opening));
        self
    }

    /// The launch.
    #[must_use]
    pub fn launch(&self) -> &Launch {
        &self.launch
    }

    /// Diagnostics of every process this transport started, in order.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<ProcessDiagnostics> {
        self.processes.borrow().iter().map(DiagnosticsLog::snapshot).collect()
    }

    async fn open_channel(
        &self,
        request: HarnessTurnRequest,
        signal: AbortSignal,
    ) -> Result<Box<dyn HarnessChannel>, TransportError> {
        if signal.is_aborted() {
            return Err(TransportError::Aborted(signal.reason().unwrap_or(AbortReason::HostCancelled)));
        }
        let process = HarnessProcess::start(&self.launch, signal.clone())?;
        self.processes.borrow_mut().push(process.diagnostics_log());
        let frames = self.opening.as_ref().map(|opening| opening(&request)).unwrap_or_default();
        for frame in &frames {
            let line = serde_json::Value::Object(frame.clone()).to_string();
            if let Err(error) = process.write_line(&line, signal.clone()).await {
                process.dispose().await;
                return Err(error);
            }
        }
        if self.launch.end_input_after_opening {
            process.end_input().await;
        }
        Ok(Box::new(ChildProcessChannel { process, mode: self.launch.mode, closed: Cell::new(false) }))
    }
}

impl HarnessTransport for ChildProcessTransport {
    fn open(
        &self,
        request: HarnessTurnRequest,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'_, Result<Box<dyn HarnessChannel>, TransportError>> {
        Box::pin(self.open_channel(request, signal))
    }
}

/// One turn with a live CLI.
#[derive(Debug)]
struct ChildProcessChannel {
    process: HarnessProcess,
    mode: ChildMode,
    closed: Cell<bool>,
}

impl ChildProcessChannel {
    async fn write_frame(&self, frame: HarnessFrame, signal: AbortSignal) -> Result<(), TransportError> {
        if self.closed.get() {
            return Err(TransportError::Closed);
        }
        match self.mode {
            ChildMode::Answer => {
                let line = serde_json::Value::Object(frame).to_string();
                self.process.write_line(&line, signal).await
            }
            ChildMode::Observe => {
                self.process.diagnostics_log().dropped_write();
                Ok(())
            }
        }
    }
}

impl HarnessChannel for ChildProcessChannel {
    fn read(&self, signal: AbortSignal) -> LocalBoxFuture<'_, Result<Option<HarnessFrame>, TransportError>> {
        Box::pin(self.process.next_frame(signal))
    }

    fn write(&self, frame: HarnessFrame, signal: AbortSignal) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.write_frame(frame, signal))
    }

    fn close(&self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        self.closed.set(true);
        Box::pin(async move {
            self.process.dispose().await;
            Ok(())
        })
    }
}
