//! One running runtime process: its stdin written from the caller's thread
//! while the runtime keeps up and by a thread of its own otherwise, its
//! stdout read on the cell's own runtime, and a bounded tail of its stderr.
//!
//! One process serves the turns of many cells, each on its own
//! paused-clock runtime: stdout is registered with whichever runtime reads
//! it, and moves to the next one when that one reads. Reading it there,
//! rather than on a thread of its own, saves a hand-off between threads on
//! every line, most of what one call over the protocol costs.
//!
//! While the runtime works on virtual time, the paused clock must not move:
//! a current-thread runtime with nothing to run jumps to its next timer.
//! So the cell's thread waits for the runtime's next line itself, in
//! `poll(2)` on the pipe, for as long as the runtime may stay busy; a task
//! that is running never lets the runtime park, and time cannot pass. The
//! runtime's line wakes the very thread that waits for it, with no other
//! thread between. The cell's other tasks (answers to calls in flight
//! among them) run once that line is read, at the same point of the
//! exchange whatever the runtime's speed.

use crate::launch::{Launch, SessionLimits};
use crate::message::{Clock, HarnessIdentity, HarnessMessage, RuntimeMessage, PREVIOUS_PROTOCOL, PROTOCOL};
use crate::placement::{RuntimePlacement, ThreadPin};
use crate::violation::{parse_line, quote, Awaited, Violation};
use rustix::process::{Pid, Signal};
use sharedos_contain::cage::Cage;
use sharedos_contain::descendants::reap_orphans;
use sharedos_model::execution::RuntimeManifest;
use sharedos_model::message::PROTOCOL_VERSION;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::net::unix::pipe;

/// How long a shut-down waits for the last of stderr.
const STDERR_SETTLE: Duration = Duration::from_millis(200);
/// Bytes read from stdout at a time.
const READ_CHUNK: usize = 64 * 1024;
/// A line is written from the caller's thread when it and every line the
/// runtime has not yet confirmed reading (through a wait's `seen`) come to
/// at most this many bytes: a pipe holds 64 KiB, so such a write cannot
/// block whatever the runtime does. Longer backlogs go through the writer
/// thread, which may block on a runtime that stopped reading.
const DIRECT_WRITE_BYTES: usize = 16 * 1024;

/// The runtime's stdin: written directly while the backlog is small,
/// through the writer thread otherwise, in order either way.
struct Input {
    stdin: Arc<Mutex<Option<std::process::ChildStdin>>>,
    queue: Option<mpsc::Sender<Vec<u8>>>,
    /// Lines handed to the writer thread and not yet written.
    queued: Arc<std::sync::atomic::AtomicUsize>,
    /// Byte lengths of the lines written after the last one a wait confirmed.
    unconfirmed: VecDeque<usize>,
    confirmed: u64,
}

impl Input {
    fn write(&mut self, line: Vec<u8>) {
        use std::sync::atomic::Ordering;
        let backlog: usize = self.unconfirmed.iter().sum();
        self.unconfirmed.push_back(line.len());
        if self.queued.load(Ordering::Acquire) == 0 && backlog + line.len() <= DIRECT_WRITE_BYTES {
            if let Some(stdin) = lock(&self.stdin).as_mut() {
                let _ = stdin.write_all(&line).and_then(|()| stdin.flush());
            }
        } else if let Some(queue) = &self.queue {
            self.queued.fetch_add(1, Ordering::AcqRel);
            let _ = queue.send(line);
        }
    }

    /// The runtime has read `seen` lines in all.
    fn confirm(&mut self, seen: u64) {
        while self.confirmed < seen && self.unconfirmed.pop_front().is_some() {
            self.confirmed += 1;
        }
    }

    /// Ends the runtime's input. A writer thread blocked on a runtime that
    /// stopped reading holds the pipe; it lets go when the process is
    /// killed, and the pipe closes with it.
    fn close(&mut self) {
        self.queue.take();
        match self.stdin.try_lock() {
            Ok(mut stdin) => drop(stdin.take()),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => drop(poisoned.into_inner().take()),
            Err(std::sync::TryLockError::WouldBlock) => {}
        }
    }
}

/// What reading stdout gives.
#[derive(Debug)]
enum Incoming {
    Line(Vec<u8>),
    TooLong,
    Eof,
    BusyTimeout,
}

/// The runtime's stdout: between reads, or registered with the runtime
/// that read it last.
enum Pipe {
    Detached(OwnedFd),
    Attached { receiver: pipe::Receiver, runtime: tokio::runtime::Id },
    Closed,
}

/// The pipe registered with the current runtime, moved to it from the
/// runtime that read it before; `None` once it closed.
fn attached(pipe: &mut Pipe) -> Option<&pipe::Receiver> {
    let current = tokio::runtime::Handle::current().id();
    let moving = match std::mem::replace(pipe, Pipe::Closed) {
        Pipe::Attached { receiver, runtime } if runtime == current => {
            *pipe = Pipe::Attached { receiver, runtime };
            None
        }
        Pipe::Attached { receiver, .. } => receiver.into_nonblocking_fd().ok(),
        Pipe::Detached(fd) => Some(fd),
        Pipe::Closed => None,
    };
    if let Some(receiver) = moving.and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok()) {
        *pipe = Pipe::Attached { receiver, runtime: current };
    }
    match pipe {
        Pipe::Attached { receiver, .. } => Some(receiver),
        Pipe::Detached(_) | Pipe::Closed => None,
    }
}

/// Stdout split into lines of at most `max` bytes; a longer line is
/// reported once and skipped without being kept.
struct Output {
    pipe: Pipe,
    /// What one read fills.
    chunk: Vec<u8>,
    /// Bytes read and not yet handed out, no line end among them.
    pending: Vec<u8>,
    /// Lines read and not yet handed out.
    lines: VecDeque<Incoming>,
    /// Inside a line that passed the cap: skip to its end.
    skipping: bool,
    /// The last line handed out, kept to quote it in a diagnostic.
    last: Vec<u8>,
    max: usize,
    /// Whether, and since when, the runtime works on virtual time.
    busy: Arc<Mutex<Option<Busy>>>,
    /// Told when the runtime starts working, so a read waiting on the
    /// cell's runtime turns into one waiting in place.
    started: Arc<tokio::sync::Notify>,
}

/// A runtime at work on virtual time: since when, and for how long it may be.
#[derive(Debug, Clone, Copy)]
struct Busy {
    since: Instant,
    limit: Duration,
}

impl Output {
    /// The next line, reading on the current runtime as needed, or word
    /// that the runtime has been busy too long.
    async fn next(&mut self) -> Incoming {
        loop {
            if let Some(incoming) = self.lines.pop_front() {
                return incoming;
            }
            let busy = *lock(&self.busy);
            let Some(receiver) = attached(&mut self.pipe) else { return Incoming::Eof };
            let read = match busy {
                Some(busy) => {
                    let left = busy.limit.saturating_sub(busy.since.elapsed());
                    if left.is_zero() {
                        return Incoming::BusyTimeout;
                    }
                    read_in_place(receiver, left, &mut self.chunk)
                }
                None => {
                    tokio::select! {
                        biased;
                        ready = receiver.readable() => if ready.is_err() {
                            return Incoming::Eof;
                        },
                        // Written to: the runtime works, and this read must
                        // wait in place from now on.
                        () = self.started.notified() => continue,
                    }
                    receiver.try_read(&mut self.chunk)
                }
            };
            self.took(read);
        }
    }

    /// Splits what one read of the pipe gave into lines; the end of the
    /// output, or a broken pipe, is the end of the lines.
    fn took(&mut self, read: std::io::Result<usize>) {
        match read {
            Ok(0) => {
                self.pipe = Pipe::Closed;
                self.lines.push_back(Incoming::Eof);
            }
            Ok(read) => {
                let chunk = std::mem::take(&mut self.chunk);
                self.split(&chunk[..read]);
                self.chunk = chunk;
            }
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted) => {}
            Err(_) => {
                self.pipe = Pipe::Closed;
                self.lines.push_back(Incoming::Eof);
            }
        }
    }

    /// A line already received or readable at once, without waiting.
    fn next_now(&mut self) -> Option<Incoming> {
        if self.lines.is_empty() {
            let receiver = attached(&mut self.pipe)?;
            let read = read_in_place(receiver, Duration::ZERO, &mut self.chunk);
            self.took(read);
        }
        self.lines.pop_front()
    }

    fn split(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (body, ends, rest) = match bytes.iter().position(|b| *b == b'\n') {
                Some(at) => (&bytes[..at], true, &bytes[at + 1..]),
                None => (bytes, false, &[][..]),
            };
            if !self.skipping && self.pending.len() + body.len() > self.max {
                self.skipping = true;
                self.pending.clear();
                self.lines.push_back(Incoming::TooLong);
            }
            if !self.skipping {
                self.pending.extend_from_slice(body);
            }
            if ends {
                if !self.skipping {
                    self.lines.push_back(Incoming::Line(std::mem::take(&mut self.pending)));
                }
                self.skipping = false;
            }
            bytes = rest;
        }
    }
}

/// Waits up to `limit` in this thread for the pipe to have bytes, and reads
/// them; `WouldBlock` when it has none yet. The read goes past tokio's
/// readiness, which is only refreshed when the runtime parks; a read that
/// empties the pipe leaves a readiness tokio may still hold, which its next
/// `try_read` clears, and new bytes raise a new edge.
fn read_in_place(receiver: &pipe::Receiver, limit: Duration, chunk: &mut [u8]) -> std::io::Result<usize> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = Timespec::try_from(limit).unwrap_or(Timespec { tv_sec: i64::MAX, tv_nsec: 0 });
    let mut fds = [PollFd::new(receiver, PollFlags::IN)];
    poll(&mut fds, Some(&timeout)).map_err(std::io::Error::from)?;
    rustix::io::read(receiver.as_fd(), chunk).map_err(std::io::Error::from)
}

/// A started runtime process.
pub struct Session {
    child: Mutex<Child>,
    input: Mutex<Input>,
    output: tokio::sync::Mutex<Output>,
    busy: Arc<Mutex<Option<Busy>>>,
    started: Arc<tokio::sync::Notify>,
    stderr: Arc<Mutex<StderrTail>>,
    /// The stderr pipe's read end again, to count what it holds unread.
    stderr_pipe: Option<OwnedFd>,
    /// Told when the stderr reader has seen the end of stderr.
    stderr_done: Mutex<mpsc::Receiver<()>>,
    limits: SessionLimits,
    clock: Clock,
    command: String,
    written: std::cell::Cell<u64>,
    /// Lines written before the current turn's `turn` message: a runtime's
    /// `seen` counts from that message, so that no count depends on which
    /// turns the process served before.
    turn_start: std::cell::Cell<u64>,
    /// Fences written so far: the next one's number is one more.
    fences: std::cell::Cell<u64>,
    /// The last wait that did not count, as (seen, written).
    stale_wait: std::cell::Cell<Option<(u64, u64)>>,
    placement: RuntimePlacement,
    /// The cgroup holding everything the process started, where there is one.
    cage: Option<Cage>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("command", &self.command).finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Session {
    /// Starts `launch` in a process group of its own, with only its
    /// variables, inside a cage of its own where the host allows one
    /// ([`sharedos_contain::cage`]). It is read on tokio runtimes with I/O
    /// enabled.
    ///
    /// # Errors
    /// When the process cannot be started.
    pub fn start(launch: &Launch) -> std::io::Result<Session> {
        let (cage, start) = Cage::around(&launch.command, &launch.args, &launch.env, launch.cwd.as_deref());
        let mut command = Command::new(&start.program);
        command.args(&start.args).env_clear().envs(&launch.env).process_group(0);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn()?;
        let placement = RuntimePlacement::of(&child);
        let (queue, queued_lines) = mpsc::channel::<Vec<u8>>();
        let stdin = Arc::new(Mutex::new(child.stdin.take()));
        let queued = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        {
            let (stdin, queued) = (Arc::clone(&stdin), Arc::clone(&queued));
            std::thread::spawn(move || {
                for line in queued_lines {
                    if let Some(stdin) = lock(&stdin).as_mut() {
                        let _ = stdin.write_all(&line).and_then(|()| stdin.flush());
                    }
                    queued.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
                }
            });
        }
        let input = Input { stdin, queue: Some(queue), queued, unconfirmed: VecDeque::new(), confirmed: 0 };
        let pipe = child.stdout.take().map_or(Pipe::Closed, |stdout| Pipe::Detached(stdout.into()));
        let (busy, started) = (Arc::new(Mutex::new(None)), Arc::new(tokio::sync::Notify::new()));
        let output = Output {
            pipe,
            chunk: vec![0; READ_CHUNK],
            pending: Vec::new(),
            lines: VecDeque::new(),
            skipping: false,
            last: Vec::new(),
            max: launch.limits.max_line_bytes,
            busy: Arc::clone(&busy),
            started: Arc::clone(&started),
        };
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let (stderr_ended, stderr_done) = mpsc::channel();
        let stderr_pipe = child.stderr.as_ref().and_then(|pipe| pipe.as_fd().try_clone_to_owned().ok());
        if let Some(pipe) = child.stderr.take() {
            let (tail, cap) = (Arc::clone(&stderr), launch.limits.stderr_tail_bytes);
            std::thread::spawn(move || {
                keep_tail(pipe, cap, &tail);
                let _ = stderr_ended.send(());
            });
        }
        Ok(Session {
            child: Mutex::new(child),
            input: Mutex::new(input),
            output: tokio::sync::Mutex::new(output),
            busy,
            started,
            stderr,
            stderr_done: Mutex::new(stderr_done),
            stderr_pipe,
            limits: launch.limits.clone(),
            clock: launch.clock,
            command: launch.command.clone(),
            written: std::cell::Cell::new(0),
            turn_start: std::cell::Cell::new(0),
            fences: std::cell::Cell::new(0),
            stale_wait: std::cell::Cell::new(None),
            placement,
            cage,
        })
    }

    /// Says `hello` and waits (in real time) for `ready`.
    ///
    /// # Errors
    /// The violation the answer is.
    pub async fn handshake(&self) -> Result<RuntimeManifest, Violation> {
        let hello = HarnessMessage::Hello {
            protocol: PROTOCOL,
            harness: HarnessIdentity { name: "sharedos-conformance".into(), version: env!("CARGO_PKG_VERSION").into() },
            clock: self.clock,
        };
        self.write_busy(&hello, self.limits.startup_timeout);
        let answer = match self.clock {
            // Busy time is only watched on virtual time; on a real clock
            // the wait for `ready` is bounded by the clock itself.
            Clock::Real => tokio::time::timeout(self.limits.startup_timeout, self.next())
                .await
                .unwrap_or(Err(Violation::Unresponsive { ms: 0, stale_wait: None })),
            Clock::Virtual => self.next().await,
        };
        self.idle();
        match answer {
            Ok(RuntimeMessage::Ready { protocol, manifest }) if protocol == PROTOCOL => {
                if manifest.protocol_version == PROTOCOL_VERSION {
                    Ok(manifest)
                } else {
                    Err(Violation::ProtocolMismatch {
                        named: format!("manifest protocolVersion {:?}", manifest.protocol_version),
                        previous: false,
                    })
                }
            }
            Ok(RuntimeMessage::Ready { protocol, .. }) => Err(Violation::ProtocolMismatch {
                previous: protocol == PREVIOUS_PROTOCOL,
                named: format!("protocol {protocol:?}"),
            }),
            Ok(other) => Err(Violation::NotReady { detail: format!("it wrote `{}` first", other.kind()) }),
            Err(Violation::Unresponsive { .. }) => Err(Violation::NotReady {
                detail: format!("no ready within {} ms", self.limits.startup_timeout.as_millis()),
            }),
            Err(Violation::Exited { .. }) => Err(Violation::Exited { awaited: Awaited::Ready }),
            Err(violation) => Err(violation),
        }
    }

    /// For a turn on virtual time: holds the calling thread on the CPU it
    /// runs on and puts the runtime there too, until the pin drops (see
    /// [`crate::placement`]).
    #[must_use]
    pub fn share_cpu(&self) -> Option<ThreadPin> {
        if self.clock != Clock::Virtual {
            return None;
        }
        let pin = ThreadPin::here()?;
        self.placement.put_on(pin.cpu());
        Some(pin)
    }

    /// Writes `message`; the runtime is busy from now until it waits.
    pub fn write(&self, message: &HarnessMessage<'_>) {
        self.write_busy(message, self.limits.busy_timeout);
    }

    /// Writes the next `fence` for `turn`, answering its number; the
    /// runtime is busy until it echoes it.
    pub fn fence(&self, turn: &str) -> u64 {
        let fence = self.fences.get() + 1;
        self.fences.set(fence);
        self.write(&HarnessMessage::Fence { turn, fence });
        fence
    }

    /// How many lines the harness has written since the current turn's
    /// `turn` message, that message included: what a current `seen` says.
    #[must_use]
    pub fn written_in_turn(&self) -> u64 {
        self.written.get().saturating_sub(self.turn_start.get())
    }

    /// The clock the runtime works against.
    #[must_use]
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// How long the runtime may stay busy (real time, on virtual time).
    #[must_use]
    pub fn busy_timeout(&self) -> Duration {
        self.limits.busy_timeout
    }

    fn write_busy(&self, message: &HarnessMessage<'_>, limit: Duration) {
        let Ok(mut line) = serde_json::to_vec(message) else { return };
        line.push(b'\n');
        if matches!(message, HarnessMessage::Turn { .. }) {
            self.turn_start.set(self.written.get());
        }
        self.written.set(self.written.get() + 1);
        lock(&self.input).write(line);
        let mut busy = lock(&self.busy);
        if busy.is_none() && self.clock == Clock::Virtual {
            *busy = Some(Busy { since: Instant::now(), limit });
            self.started.notify_one();
        }
    }

    /// The runtime said it is idle: virtual time may pass.
    pub fn idle(&self) {
        lock(&self.busy).take();
    }

    /// The runtime waits having read `seen` lines of the turn: idle only
    /// when it has read every line written (a wait sent before it read a
    /// later line is stale, and the runtime will say wait again); `true`
    /// for a current one.
    ///
    /// # Errors
    /// A wait that says it has seen more lines than were written.
    pub fn waits(&self, seen: u64) -> Result<bool, Violation> {
        self.has_seen("wait", seen)?;
        let written = self.written_in_turn();
        let current = seen == written;
        if current {
            self.stale_wait.set(None);
            self.idle();
        } else {
            self.stale_wait.set(Some((seen, written)));
        }
        Ok(current)
    }

    /// A message of `kind` says the runtime has read `seen` lines since
    /// the turn's `turn` message: no more than were written, and the lines
    /// it confirms no longer hold up direct writes.
    ///
    /// # Errors
    /// A count larger than the lines written.
    pub fn has_seen(&self, kind: &'static str, seen: u64) -> Result<(), Violation> {
        let written = self.written_in_turn();
        if seen > written {
            return Err(Violation::SeenAhead { kind, seen, written });
        }
        lock(&self.input).confirm(self.turn_start.get().saturating_add(seen));
        Ok(())
    }

    /// The next message, skipping (and counting) blank lines.
    ///
    /// # Errors
    /// The violation the next line is, the end of the output, or a runtime
    /// busy for too long.
    pub async fn next(&self) -> Result<RuntimeMessage, Violation> {
        let mut output = self.output.lock().await;
        let mut blank = 0;
        loop {
            match output.next().await {
                Incoming::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {
                    blank += 1;
                    if blank > self.limits.max_ignored_lines {
                        return Err(Violation::Flood { max: self.limits.max_ignored_lines });
                    }
                }
                Incoming::Line(line) => {
                    let message = parse_line(&line);
                    output.last = line;
                    return message;
                }
                Incoming::TooLong => return Err(Violation::LineTooLong { max: self.limits.max_line_bytes }),
                Incoming::BusyTimeout => {
                    if lock(&self.busy).is_some() {
                        let ms = u64::try_from(self.limits.busy_timeout.as_millis()).unwrap_or(u64::MAX);
                        return Err(Violation::Unresponsive { ms, stale_wait: self.stale_wait.get() });
                    }
                }
                // The caller knows what it waited for, and says so.
                Incoming::Eof => return Err(Violation::Exited { awaited: Awaited::Ending }),
            }
        }
    }

    /// A message already received, or readable without waiting; `None`
    /// when the runtime has written nothing more.
    pub async fn next_now(&self) -> Option<Result<RuntimeMessage, Violation>> {
        let mut output = self.output.lock().await;
        loop {
            return Some(match output.next_now()? {
                Incoming::Line(line) if line.iter().all(u8::is_ascii_whitespace) => continue,
                Incoming::Line(line) => {
                    let message = parse_line(&line);
                    output.last = line;
                    message
                }
                Incoming::TooLong => Err(Violation::LineTooLong { max: self.limits.max_line_bytes }),
                Incoming::BusyTimeout | Incoming::Eof => return None,
            });
        }
    }

    /// The last line read, quoted for a diagnostic.
    pub async fn last_received(&self) -> Option<String> {
        let output = self.output.lock().await;
        (!output.last.is_empty()).then(|| quote(&output.last))
    }

    /// Whether the process has exited. It is not reaped here: its id
    /// names its process group until [`Session::shut_down`] kills that.
    #[must_use]
    pub fn has_exited(&self) -> bool {
        use rustix::process::{waitid, WaitId, WaitIdOptions};
        let Some(pid) = Pid::from_raw(i32::try_from(self.pid()).unwrap_or(i32::MAX)) else { return true };
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        // An exited child reports a status; a running one none (its siginfo
        // then holds no pid, which rustix reads as no status).
        !matches!(waitid(WaitId::Pid(pid), options), Ok(None))
    }

    /// The process id (its process group's id too).
    #[must_use]
    pub fn pid(&self) -> u32 {
        lock(&self.child).id()
    }

    /// The last bytes the runtime wrote on stderr.
    #[must_use]
    pub fn stderr_tail(&self) -> String {
        self.stderr_since(0)
    }

    /// How many bytes the runtime has written on stderr so far: a mark
    /// that [`Session::stderr_since`] quotes from. What is still in the
    /// pipe, unread by the stderr reader, was written before the mark
    /// too, and counts: a runtime that wrote to stderr before it ended
    /// its last turn has that turn's lines quoted, never the next one's.
    #[must_use]
    pub fn stderr_mark(&self) -> u64 {
        stderr_written(&lock(&self.stderr), self.stderr_pipe.as_ref())
    }

    /// The last bytes the runtime wrote on stderr after `mark`, so that
    /// what a turn quotes is its own, whichever turns the process served
    /// before.
    #[must_use]
    pub fn stderr_since(&self, mark: u64) -> String {
        let tail = lock(&self.stderr);
        let written = usize::try_from(tail.total.saturating_sub(mark)).unwrap_or(usize::MAX);
        let skip = tail.bytes.len().saturating_sub(written);
        let kept: Vec<u8> = tail.bytes.iter().skip(skip).copied().collect();
        String::from_utf8_lossy(&kept).trim().to_string()
    }

    /// Closes stdin, gives the process its grace to exit, then kills its
    /// whole process group and its cage (everything it started, in a
    /// session of its own or not), and reaps it.
    pub fn shut_down(&self) {
        self.idle();
        lock(&self.input).close();
        let mut child = lock(&self.child);
        let deadline = Instant::now() + self.limits.shutdown_grace;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        // Members that outlived the leader go too. Once the child is
        // reaped its id may be reused, so the group is killed first.
        let _ = rustix::process::kill_process_group(Pid::from_child(&child), Signal::KILL);
        if let Some(cage) = &self.cage {
            cage.kill();
        }
        let _ = child.kill();
        let _ = child.wait();
        // What it left to the harness as their subreaper, once exited.
        reap_orphans();
        // What it wrote last on stderr is read before the tail is quoted;
        // a process outside the group that holds stderr open is not waited for.
        let _ = lock(&self.stderr_done).recv_timeout(STDERR_SETTLE);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The end of what the runtime wrote on stderr, and how much it wrote.
#[derive(Debug, Default)]
struct StderrTail {
    bytes: VecDeque<u8>,
    total: u64,
}

/// What the runtime has written on stderr: what the reader counted, and
/// what the pipe still holds unread. Called with the tail's lock held,
/// which the reader holds across each read.
fn stderr_written(tail: &StderrTail, pipe: Option<&OwnedFd>) -> u64 {
    let unread = pipe.and_then(|pipe| rustix::io::ioctl_fionread(pipe).ok()).unwrap_or(0);
    tail.total + unread
}

/// Keeps the last `cap` bytes of stderr. Each read is made holding the
/// tail's lock, once `poll` says bytes wait: a byte is then either still in
/// the pipe or counted, never in between, which [`Session::stderr_mark`]
/// relies on.
fn keep_tail(mut stderr: std::process::ChildStderr, cap: usize, tail: &Mutex<StderrTail>) {
    use rustix::event::{poll, PollFd, PollFlags};
    let mut buf = [0u8; 4096];
    loop {
        let mut fds = [PollFd::new(&stderr, PollFlags::IN)];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        let mut tail = lock(tail);
        let n = match stderr.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        tail.bytes.extend(&buf[..n]);
        tail.total += n as u64;
        let over = tail.bytes.len().saturating_sub(cap);
        tail.bytes.drain(..over);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{stderr_written, StderrTail};
    use std::io::Write;
    use std::os::fd::OwnedFd;

    /// Bytes a runtime wrote before a mark, which the reader has not read
    /// yet, count as written before it: they are quoted with the turn that
    /// wrote them, never the next.
    #[test]
    fn stderr_still_in_the_pipe_counts_as_written_before_the_mark() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let reader = OwnedFd::from(reader);
        let tail = StderrTail { bytes: b"read".iter().copied().collect(), total: 4 };
        assert_eq!(stderr_written(&tail, Some(&reader)), 4);
        writer.write_all(b"noise of turn 1\n").unwrap();
        assert_eq!(stderr_written(&tail, Some(&reader)), 4 + 16);
        assert_eq!(stderr_written(&tail, None), 4, "no pipe: what was read");
    }
}
