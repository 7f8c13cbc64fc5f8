//! The background task that owns a running CLI: it reads stdout into
//! frames, keeps a tail of stderr, enforces the deadline and the
//! ignored-line cap, kills the process group when told to (or when its
//! handle is dropped), and always reaps the child; when it ends, the CLI's
//! cage goes too, with whatever the CLI started outside its group.
//!
//! It is a `Send` task on the ambient tokio runtime, so it keeps running
//! while the driver is busy elsewhere: a CLI that exits is reaped at once
//! and a CLI that floods stderr never blocks on a full pipe.

use super::diagnostics::{ChannelEnd, DiagnosticsLog, ExitReport};
use super::launch::ProcessLimits;
use super::lines::{classify, LineKind};
use super::splitter::{LineSplitter, RawLine};
use crate::frame::HarnessFrame;
use rustix::process::{kill_process_group, Pid, Signal};
use sharedos_contain::cage::Cage;
use sharedos_contain::descendants::reap_orphans;
use std::collections::VecDeque;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdout};
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep_until, Instant};

/// Bytes read from a pipe at a time; also bounds the frames one read can
/// queue ahead of the driver.
const CHUNK: usize = 8 * 1024;

/// What the task hands the channel, in stream order.
#[derive(Debug)]
pub(super) enum Event {
    /// One frame read from stdout.
    Frame(HarnessFrame),
    /// The channel ended; nothing follows.
    End(ChannelEnd),
}

/// What the channel has learnt from the task so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct PumpStatus {
    /// The channel has ended (its `End` may still be queued).
    pub ended: bool,
    /// The child has been reaped.
    pub reaped: bool,
    /// The task has finished: both pipes are read to the end (or gave up)
    /// and the diagnostics are final.
    pub done: bool,
}

/// The task's inputs.
pub(super) struct Pump {
    pub child: Child,
    pub pgid: Option<u32>,
    /// Everything the CLI started, where there is a cage: killed when the
    /// task ends, or when it is dropped unfinished.
    pub cage: Option<Cage>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    pub events: mpsc::Sender<Event>,
    /// A kill request with the end to report; closed when the handle drops.
    pub commands: mpsc::UnboundedReceiver<ChannelEnd>,
    pub status: watch::Sender<PumpStatus>,
    pub log: DiagnosticsLog,
    pub limits: ProcessLimits,
}

/// What woke the task.
enum Wake {
    Command(Option<ChannelEnd>),
    Deadline,
    HardKill,
    Exit(io::Result<ExitStatus>),
    Delivered,
    ReceiverGone,
    Stdout(io::Result<usize>),
    Stderr(io::Result<usize>),
    DrainOver,
}

/// The task's progress.
struct State {
    splitter: LineSplitter,
    outgoing: VecDeque<Event>,
    end: Option<ChannelEnd>,
    exited: bool,
    term_sent_at: Option<Instant>,
    hard_killed: bool,
    /// After exit: when the pipes stop being read if they stay quiet.
    drain_until: Option<Instant>,
    receiver_gone: bool,
    commands_open: bool,
}

impl Pump {
    /// Runs until the child is reaped, both pipes are done and the end has
    /// been handed over (or nobody is left to take it).
    pub(super) async fn run(mut self) {
        let deadline = self.limits.deadline.map(|after| Instant::now() + after);
        let mut st = State {
            splitter: LineSplitter::new(self.limits.max_line_bytes),
            outgoing: VecDeque::new(),
            end: None,
            exited: false,
            term_sent_at: None,
            hard_killed: false,
            drain_until: None,
            receiver_gone: false,
            commands_open: true,
        };
        let mut out_buf = vec![0_u8; CHUNK];
        let mut err_buf = vec![0_u8; CHUNK];
        while !self.finished(&st) {
            let now = Instant::now();
            let hard_kill_at = st.term_sent_at.map_or(now, |at| at + self.limits.kill_grace);
            // Biased, in this order: commands and timers are never starved
            // by a flood, a read of ready data always beats the drain timer,
            // and stdout is only read once queued frames are handed over.
            let wake = tokio::select! {
                biased;
                command = self.commands.recv(), if st.commands_open => Wake::Command(command),
                () = sleep_until(deadline.unwrap_or(now)), if deadline.is_some() && !st.exited && st.term_sent_at.is_none() => Wake::Deadline,
                () = sleep_until(hard_kill_at), if st.term_sent_at.is_some() && !st.hard_killed && !st.exited => Wake::HardKill,
                status = self.child.wait(), if !st.exited => Wake::Exit(status),
                permit = self.events.reserve(), if !st.outgoing.is_empty() && !st.receiver_gone => match permit {
                    Ok(permit) => {
                        if let Some(event) = st.outgoing.pop_front() {
                            permit.send(event);
                        }
                        Wake::Delivered
                    }
                    Err(_) => Wake::ReceiverGone,
                },
                read = read_some(&mut self.stdout, &mut out_buf), if self.stdout.is_some() && (st.outgoing.is_empty() || st.end.is_some()) => Wake::Stdout(read),
                read = read_some(&mut self.stderr, &mut err_buf), if self.stderr.is_some() => Wake::Stderr(read),
                () = sleep_until(st.drain_until.unwrap_or(now)), if st.drain_until.is_some() && st.outgoing.is_empty() => Wake::DrainOver,
            };
            self.handle(wake, &mut st, &out_buf, &err_buf).await;
        }
        // Members that outlived the leader were sent SIGTERM when it exited;
        // one that ignored it, or let go of the pipes, must not outlive the
        // turn either, nor one that left the group.
        self.signal_group(Signal::KILL);
        // Removing the cage waits, briefly, for the killed to be gone; those
        // re-parented to the harness (its subreaper) are then reaped.
        let cage = self.cage.take();
        let _ = tokio::task::spawn_blocking(move || {
            drop(cage);
            reap_orphans();
        })
        .await;
        self.status.send_modify(|s| s.done = true);
    }

    fn finished(&self, st: &State) -> bool {
        st.exited
            && self.stdout.is_none()
            && self.stderr.is_none()
            && st.end.is_some()
            && (st.outgoing.is_empty() || st.receiver_gone)
    }

    async fn handle(&mut self, wake: Wake, st: &mut State, out_buf: &[u8], err_buf: &[u8]) {
        match wake {
            Wake::Command(Some(end)) => self.force_end(st, end).await,
            Wake::Command(None) => {
                st.commands_open = false;
                self.force_end(st, ChannelEnd::Closed).await;
            }
            Wake::Deadline => self.force_end(st, ChannelEnd::DeadlineExceeded).await,
            Wake::HardKill => {
                st.hard_killed = true;
                self.signal_group(Signal::KILL);
                // The leader is killed directly too, in case `kill` could not run.
                let _ = self.child.start_kill();
            }
            Wake::Exit(status) => self.on_exit(st, status).await,
            Wake::Delivered => self.extend_drain(st),
            Wake::ReceiverGone => {
                st.receiver_gone = true;
                st.outgoing.clear();
                self.force_end(st, ChannelEnd::Closed).await;
            }
            Wake::Stdout(read) => self.on_stdout(st, read, out_buf).await,
            Wake::Stderr(Ok(n)) if n > 0 => {
                self.log.stderr(&err_buf[..n]);
                self.extend_drain(st);
            }
            Wake::Stderr(_) => self.stderr = None,
            Wake::DrainOver => {
                self.stdout = None;
                self.stderr = None;
                self.end_naturally(st, ChannelEnd::Exited);
            }
        }
    }

    async fn on_exit(&mut self, st: &mut State, status: io::Result<ExitStatus>) {
        st.exited = true;
        if let Ok(status) = status {
            self.log.exit(ExitReport { code: status.code(), signal: status.signal() });
        }
        self.status.send_modify(|s| s.reaped = true);
        // Descendants left in the group would hold the pipes open; they end
        // with the turn.
        self.signal_group(Signal::TERM);
        st.drain_until = Some(Instant::now() + self.limits.exit_drain);
        if self.stdout.is_none() {
            self.end_naturally(st, ChannelEnd::Exited);
        }
    }

    async fn on_stdout(&mut self, st: &mut State, read: io::Result<usize>, out_buf: &[u8]) {
        let mut lines = Vec::new();
        let closed = match read {
            Ok(0) | Err(_) => {
                lines.extend(st.splitter.finish());
                true
            }
            Ok(n) => {
                st.splitter.push(&out_buf[..n], &mut lines);
                false
            }
        };
        for line in lines {
            self.on_line(st, line).await;
        }
        self.extend_drain(st);
        if closed {
            self.stdout = None;
            let end = if st.exited { ChannelEnd::Exited } else { ChannelEnd::OutputClosed };
            self.end_naturally(st, end);
        }
    }

    async fn on_line(&mut self, st: &mut State, line: RawLine) {
        if st.end.is_some() {
            return;
        }
        match classify(line) {
            LineKind::Frame(frame) => {
                self.log.frame();
                st.outgoing.push_back(Event::Frame(frame));
            }
            LineKind::Skipped { kind, note } => {
                if self.log.skipped(kind, note) > self.limits.max_ignored_lines {
                    self.force_end(st, ChannelEnd::TooManyIgnoredLines).await;
                }
            }
        }
    }

    fn extend_drain(&self, st: &mut State) {
        if st.exited {
            st.drain_until = Some(Instant::now() + self.limits.exit_drain);
        }
    }

    /// Ends the channel after every frame already read.
    fn end_naturally(&self, st: &mut State, end: ChannelEnd) {
        if st.end.is_none() {
            st.end = Some(end);
            self.log.end(end);
            st.outgoing.push_back(Event::End(end));
            self.status.send_modify(|s| s.ended = true);
        }
    }

    /// Ends the channel now, dropping frames not yet handed over, and
    /// starts killing the process group.
    async fn force_end(&mut self, st: &mut State, end: ChannelEnd) {
        if st.end.is_none() {
            st.outgoing.clear();
            self.end_naturally(st, end);
        }
        if !st.exited && st.term_sent_at.is_none() {
            st.term_sent_at = Some(Instant::now());
            self.signal_group(Signal::TERM);
        }
    }

    /// Sends `signal` to the whole process group. The group id cannot be
    /// reused while any member lives, so this never reaches a stranger's
    /// group while ours has members; when no group is found, the leader
    /// alone is killed (a no-op once it has been reaped).
    fn signal_group(&mut self, signal: Signal) {
        let Some(pgid) = self.pgid.and_then(|pgid| i32::try_from(pgid).ok()).and_then(Pid::from_raw) else {
            return;
        };
        if kill_process_group(pgid, signal).is_err() {
            let _ = self.child.start_kill();
        }
    }
}

/// Reads from a pipe that may already be done (then never resolves).
async fn read_some<R: AsyncRead + Unpin>(pipe: &mut Option<R>, buf: &mut [u8]) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}
