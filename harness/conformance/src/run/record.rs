//! Execution records: assembling one per turn from what the envelope
//! returned and what the kernel audited, and checking it carries nothing it
//! must not. The record types live in [`sharedos_model::record`].

pub mod assemble;
pub mod events;
pub mod redaction;
