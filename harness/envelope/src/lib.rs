//! The SharedOS execution envelope: the fixed layer around any runtime.
//!
//! Build an [`executor::Executor`] over a kernel (`sharedos_port::turn_kernel::TurnKernel`)
//! and a runtime ([`runtime::RuntimePlugin`]); `execute` validates the
//! request, opens the turn through the kernel, mediates every tool call the
//! runtime asks for, enforces the deadline and the drain, and records the
//! ending. Time is tokio time: under a paused clock deadlines cost nothing.
#![forbid(unsafe_code)]

pub mod annotations;
pub mod deadline;
pub mod error;
pub mod events;
pub mod executor;
pub mod host;
mod kernel_call;
mod mediation;
pub mod options;
mod outcome;
pub mod retry;
pub mod runtime;
pub mod tasks;
mod turn;
pub mod visible;
