//! Nothing a runtime starts outlives it.
//!
//! Two mechanisms, and which applies where:
//!
//! - [`cage`]: where the host lets the harness make cgroups (cgroup v2,
//!   writable), each seat's process starts in a cgroup of its own, which
//!   everything it starts stays in whatever it does (a new session, a
//!   double fork), and which is killed whole (`cgroup.kill`) when the
//!   seat's use ends, leaving every other seat's alone.
//! - [`descendants`]: everywhere, the command's process is the subreaper of
//!   everything it starts from the moment it starts, so a process whose
//!   parent exits is re-parented to it rather than to init, and stays its
//!   descendant; when the command ends (normally or on a signal) every
//!   descendant still there is killed, and an orphan that exits before is
//!   reaped when a seat's use ends ([`descendants::reap_orphans`]). Where there are no cgroups, a
//!   seat's use ends with its process group killed, and what left the
//!   group is killed when the command ends.
#![forbid(unsafe_code)]

pub mod cage;
pub mod descendants;
