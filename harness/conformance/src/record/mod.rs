//! Execution records: assembling one per turn, and checking that it is
//! usable and carries nothing it must not.
//!
//! The record types themselves live in [`sharedos_model::record`]; this module
//! only reads what the envelope returned and what the kernel audited.

pub mod assemble;
pub mod completeness;
pub mod events;
pub mod redaction;

pub use assemble::{assemble_record, AssemblyError, AssemblyInput, CostInput, SystemInput};
pub use completeness::{check_completeness, Completeness, Gap, GapSeverity};
pub use redaction::{check_redaction, RedactionFinding};
