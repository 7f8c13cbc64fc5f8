//! How a seat's process is started and bounded: the description, shared
//! with the seat files that hold it, is in `sharedos-conformance-metadata`.

pub use sharedos_conformance_metadata::launch::{Launch, SessionLimits};
