//! Grading a cell: receipts of what was attempted, the record's
//! completeness, host-driven messaging operations as attempts, and the
//! judge that decides the verdict from them once.

pub mod completeness;
pub mod evidence;
pub mod judge;
pub mod messaging;
pub mod receipt;
