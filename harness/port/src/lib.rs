//! The seam between the envelope and a kernel: the operations the envelope
//! calls for one turn, the abort signals both sides share, and the ways a
//! kernel operation rejects. The envelope and the runtimes depend on this
//! crate alone; the reference kernel implements it.
#![forbid(unsafe_code)]

pub mod audit;
pub mod error;
pub mod escalation;
pub mod signal;
pub mod turn_kernel;
