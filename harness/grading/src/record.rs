//! The record of a turn and what is read from it: the `ExecutionRecord`
//! assembled from what the envelope handed back, the events inside it, the
//! receipts a self-reporting runtime files, the redaction every record must
//! pass, and the executed turn the running crate hands over.

pub mod assemble;
pub mod events;
pub mod receipt;
pub mod redaction;
pub mod turn;
