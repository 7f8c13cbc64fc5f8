//! One CPU for a turn on virtual time: the thread that serves the turn and
//! the runtime it talks to.
//!
//! Over the protocol the two take turns: one works while the other waits
//! for its next line. A line that wakes a process on another CPU costs a
//! wake-up across CPUs, tens of microseconds on a virtual machine and most
//! of what a mediated call costs; on one CPU a wake-up is a task switch.
//! On virtual time the runtime's speed cannot change a verdict, so sharing
//! a CPU costs nothing a report shows. A runtime on the real clock is left
//! where the system puts it.

use rustix::process::Pid;
use rustix::thread::{sched_getaffinity, sched_getcpu, sched_setaffinity, CpuSet};
use std::marker::PhantomData;

/// The calling thread held on one CPU until this drops.
///
/// CPU affinity belongs to a thread, so a pin neither moves nor leaves its
/// thread (it is not `Send`).
#[derive(Debug)]
#[must_use = "the thread is released when the pin drops"]
pub struct ThreadPin {
    cpu: usize,
    /// What the thread may use again when the pin drops; `None` when it was
    /// on one CPU already, and stays so.
    released: Option<CpuSet>,
    _thread: PhantomData<*const ()>,
}

impl ThreadPin {
    /// Holds the calling thread on the CPU it runs on now, the one the
    /// system chose; a thread allowed one CPU only keeps it. `None` when the
    /// system does not say (the turn then runs wherever it is put).
    pub fn here() -> Option<ThreadPin> {
        let allowed = sched_getaffinity(None).ok()?;
        if allowed.count() == 1 {
            let cpu = (0..CpuSet::MAX_CPU).find(|cpu| allowed.is_set(*cpu))?;
            return Some(ThreadPin { cpu, released: None, _thread: PhantomData });
        }
        let cpu = sched_getcpu();
        sched_setaffinity(None, &only(cpu)).ok()?;
        Some(ThreadPin { cpu, released: Some(allowed), _thread: PhantomData })
    }

    /// The CPU the thread is held on.
    #[must_use]
    pub fn cpu(&self) -> usize {
        self.cpu
    }
}

impl Drop for ThreadPin {
    fn drop(&mut self) {
        if let Some(allowed) = &self.released {
            // A thread that cannot be released still runs, on one CPU.
            let _ = sched_setaffinity(None, allowed);
        }
    }
}

/// Where a runtime's main thread was last put.
#[derive(Debug)]
pub(crate) struct RuntimePlacement {
    pid: Pid,
    cpu: std::cell::Cell<Option<usize>>,
}

impl RuntimePlacement {
    pub(crate) fn of(child: &std::process::Child) -> RuntimePlacement {
        RuntimePlacement { pid: Pid::from_child(child), cpu: std::cell::Cell::new(None) }
    }

    /// Puts the runtime's main thread on `cpu` unless it is there already.
    /// Threads the runtime starts from then on inherit it; one that
    /// exited is not there to move.
    pub(crate) fn put_on(&self, cpu: usize) {
        if self.cpu.get() != Some(cpu) && sched_setaffinity(Some(self.pid), &only(cpu)).is_ok() {
            self.cpu.set(Some(cpu));
        }
    }
}

fn only(cpu: usize) -> CpuSet {
    let mut set = CpuSet::new();
    set.set(cpu);
    set
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_holds_its_thread_on_one_cpu_and_gives_back_what_it_had() {
        std::thread::spawn(|| {
            let before = sched_getaffinity(None).unwrap();
            let pin = ThreadPin::here().unwrap();
            let held = sched_getaffinity(None).unwrap();
            assert_eq!(held.count(), 1);
            assert!(held.is_set(pin.cpu()));
            assert!(before.is_set(pin.cpu()));
            let inner = ThreadPin::here().unwrap();
            assert_eq!(inner.cpu(), pin.cpu(), "a pinned thread stays where it is");
            drop(inner);
            assert_eq!(sched_getaffinity(None).unwrap(), held, "an inner pin gives back nothing");
            drop(pin);
            assert_eq!(sched_getaffinity(None).unwrap(), before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_runtime_is_put_on_the_cpu_it_is_asked_to_be_on() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let cpu = sched_getcpu();
        let placement = RuntimePlacement::of(&child);
        placement.put_on(cpu);
        let set = sched_getaffinity(Some(Pid::from_child(&child))).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!((set.count(), set.is_set(cpu)), (1, true));
        assert_eq!(placement.cpu.get(), Some(cpu));
    }
}
