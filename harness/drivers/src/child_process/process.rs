//! [`HarnessProcess`]: one running CLI as the turn sees it — frames to
//! read, lines to write, and a disposal that leaves no process behind.

use super::diagnostics::{ChannelEnd, DiagnosticsLog, ExitReport, ProcessDiagnostics};
use super::launch::Launch;
use super::pump::{Event, Pump, PumpStatus};
use crate::frame::HarnessFrame;
use crate::transport::TransportError;
use sharedos_contain::cage::Cage;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::cell::{Cell, RefCell};
use std::process::Stdio;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{mpsc, watch, Mutex};

/// The reason reported when a signal fired without one.
fn reason_of(signal: &AbortSignal) -> AbortReason {
    signal.reason().unwrap_or(AbortReason::HostCancelled)
}

/// A running CLI with piped stdio, in its own process group.
///
/// Needs a tokio runtime with I/O and time enabled and a real clock: a
/// paused clock would jump straight to the deadline while the CLI works.
/// The signal it is started under kills the process group when it fires
/// with any reason but [`AbortReason::Draining`] (a draining turn lets the
/// CLI read the refusal of its next call and end on its own); the kill
/// happens at the next read, write or disposal, or when the handle drops.
#[derive(Debug)]
pub struct HarnessProcess {
    pid: Option<u32>,
    stdin: Mutex<Option<ChildStdin>>,
    input_ended: Cell<bool>,
    events: Mutex<mpsc::Receiver<Event>>,
    /// The end as this handle saw it, with the abort reason when it aborted.
    ended: RefCell<Option<(ChannelEnd, Option<AbortReason>)>>,
    commands: mpsc::UnboundedSender<ChannelEnd>,
    status: watch::Receiver<PumpStatus>,
    log: DiagnosticsLog,
    signal: AbortSignal,
    launch: Launch,
}

impl HarnessProcess {
    /// Spawns the CLI: environment cleared and then only the named
    /// variables, all three streams piped, its own process group, and a
    /// cage of its own where the host allows one
    /// ([`sharedos_contain::cage`]), killed whole when the CLI's use ends.
    ///
    /// # Errors
    /// [`TransportError::Aborted`] when `signal` has already fired (nothing
    /// is spawned); [`TransportError::Invalid`] for unusable limits;
    /// [`TransportError::NotStarted`] when there is no runtime or the spawn
    /// failed.
    pub fn start(launch: &Launch, signal: AbortSignal) -> Result<HarnessProcess, TransportError> {
        if signal.is_aborted() {
            return Err(TransportError::Aborted(reason_of(&signal)));
        }
        launch.limits.validate()?;
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(TransportError::NotStarted("find a tokio runtime to run the harness on".to_string()));
        }
        let environment = launch.child_environment(|name| std::env::var_os(name));
        let (cage, start) = Cage::around(&launch.command, &launch.args, &environment, launch.cwd.as_deref());
        let mut command = tokio::process::Command::new(&start.program);
        command
            .args(&start.args)
            .env_clear()
            .envs(environment)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        let mut child =
            command.spawn().map_err(|error| TransportError::NotStarted(format!("{}: {error}", launch.command)))?;
        let pid = child.id();
        let log = DiagnosticsLog::new(&launch.command, launch.limits.stderr_tail_bytes, launch.limits.max_stdout_notes);
        log.set_pid(pid);
        let (event_tx, event_rx) = mpsc::channel(launch.limits.frame_buffer);
        let (command_tx, command_rx) = mpsc::unbounded_channel();
        let (status_tx, status_rx) = watch::channel(PumpStatus::default());
        let stdin = child.stdin.take();
        let pump = Pump {
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            child,
            pgid: pid,
            cage,
            events: event_tx,
            commands: command_rx,
            status: status_tx,
            log: log.clone(),
            limits: launch.limits.clone(),
        };
        tokio::spawn(pump.run());
        Ok(HarnessProcess {
            pid,
            stdin: Mutex::new(stdin),
            input_ended: Cell::new(false),
            events: Mutex::new(event_rx),
            ended: RefCell::new(None),
            commands: command_tx,
            status: status_rx,
            log,
            signal,
            launch: launch.clone(),
        })
    }

    /// The process id, which is also its process group id.
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// A snapshot of what the process said besides its frames.
    #[must_use]
    pub fn diagnostics(&self) -> ProcessDiagnostics {
        self.log.snapshot()
    }

    /// The live diagnostics record, shared with the reading task.
    #[must_use]
    pub fn diagnostics_log(&self) -> DiagnosticsLog {
        self.log.clone()
    }

    /// Whether stdin has been closed.
    #[must_use]
    pub fn input_ended(&self) -> bool {
        self.input_ended.get()
    }

    /// Whether the start signal has fired with a reason that kills.
    fn start_signal_kills(&self) -> bool {
        self.signal.reason().is_some_and(|reason| reason != AbortReason::Draining)
    }

    /// Kills the group for the start signal and remembers why.
    fn abort_process(&self) {
        let reason = reason_of(&self.signal);
        self.ended.borrow_mut().get_or_insert((ChannelEnd::Aborted, Some(reason)));
        self.log.end(ChannelEnd::Aborted);
        let _ = self.commands.send(ChannelEnd::Aborted);
    }

    /// The next frame, or `None` once the CLI closed stdout or exited.
    ///
    /// # Errors
    /// [`TransportError::Aborted`] when `signal` (or the start signal)
    /// fires; [`TransportError::Io`] when the deadline passed or too many
    /// lines were not frames.
    pub async fn next_frame(&self, signal: AbortSignal) -> Result<Option<HarnessFrame>, TransportError> {
        loop {
            if let Some(ended) = self.ended.borrow().clone() {
                return self.end_result(ended);
            }
            let mut events = self.events.lock().await;
            let event = tokio::select! {
                biased;
                () = signal.aborted() => return Err(TransportError::Aborted(reason_of(&signal))),
                () = self.signal.aborted(), if !self.signal.is_aborted() || self.start_signal_kills() => {
                    self.abort_process();
                    continue;
                }
                event = events.recv() => event,
            };
            match event {
                Some(Event::Frame(frame)) => return Ok(Some(frame)),
                Some(Event::End(end)) => {
                    self.ended.borrow_mut().get_or_insert((end, None));
                }
                None => {
                    self.ended.borrow_mut().get_or_insert((ChannelEnd::Exited, None));
                }
            }
        }
    }

    fn end_result(
        &self,
        (end, reason): (ChannelEnd, Option<AbortReason>),
    ) -> Result<Option<HarnessFrame>, TransportError> {
        let limits = &self.launch.limits;
        match end {
            ChannelEnd::OutputClosed | ChannelEnd::Exited | ChannelEnd::Closed => Ok(None),
            ChannelEnd::Aborted => Err(TransportError::Aborted(reason.unwrap_or(AbortReason::HostCancelled))),
            ChannelEnd::DeadlineExceeded => Err(TransportError::Io(format!(
                "`{}` ran past its deadline of {} ms, so its process group was killed",
                self.launch.command,
                limits.deadline.map_or(0, |deadline| deadline.as_millis())
            ))),
            ChannelEnd::TooManyIgnoredLines => Err(TransportError::Io(format!(
                "`{}` wrote more than {} stdout lines that were not frames, so its process group was killed",
                self.launch.command, limits.max_ignored_lines
            ))),
        }
    }

    /// Writes `line` and a newline to stdin.
    ///
    /// # Errors
    /// [`TransportError::Aborted`] when `signal` (or the start signal)
    /// fires first; [`TransportError::Io`] when stdin is closed, the write
    /// failed, or the CLI ended while the write was blocked.
    pub async fn write_line(&self, line: &str, signal: AbortSignal) -> Result<(), TransportError> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(TransportError::Io("write to the harness: its stdin is already closed".to_string()));
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let mut status = self.status.clone();
        let written = tokio::select! {
            biased;
            () = signal.aborted() => Err(TransportError::Aborted(reason_of(&signal))),
            () = self.signal.aborted(), if !self.signal.is_aborted() || self.start_signal_kills() => {
                self.abort_process();
                Err(TransportError::Aborted(reason_of(&self.signal)))
            }
            result = async { pipe.write_all(&bytes).await?; pipe.flush().await } => {
                result.map_err(|error| TransportError::Io(format!("write to the harness: {error}")))
            }
            _ = status.wait_for(|s| s.ended) => {
                Err(TransportError::Io("write to the harness: it ended before reading the frame".to_string()))
            }
        };
        if written.is_ok() {
            self.log.wrote();
        }
        written
    }

    /// Resolves once the child has been reaped, with how it exited (`None`
    /// when its status could not be read).
    pub async fn exited(&self) -> Option<ExitReport> {
        let mut status = self.status.clone();
        let _ = status.wait_for(|s| s.reaped).await;
        self.log.snapshot().exit
    }

    /// Closes stdin; closing twice is harmless.
    pub async fn end_input(&self) {
        self.stdin.lock().await.take();
        self.input_ended.set(true);
    }

    /// Starts killing the process group (SIGTERM, then SIGKILL after the
    /// grace); the channel ends as closed.
    pub fn kill(&self) {
        self.ended.borrow_mut().get_or_insert((ChannelEnd::Closed, None));
        let _ = self.commands.send(ChannelEnd::Closed);
    }

    /// Ends stdin, kills the process group, waits until the child has been
    /// reaped (so no zombie is left) and the pipes are read out (so the
    /// diagnostics are final). Frames not yet read are dropped. Disposing
    /// twice is harmless.
    pub async fn dispose(&self) {
        self.end_input().await;
        self.kill();
        self.events.lock().await.close();
        let mut status = self.status.clone();
        // An error means the reading task is gone, which it only is once it
        // has finished.
        let _ = status.wait_for(|s| s.done).await;
    }
}
