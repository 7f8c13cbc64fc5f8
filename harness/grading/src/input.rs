//! The suite as files state it: cases, attack scripts and world options,
//! loaded and checked before anything runs.

pub mod baseline;
pub mod built_in_column;
pub mod case;
pub mod error;
pub mod file;
pub mod loader;
pub mod script;
pub mod seat;
pub mod world;
pub mod world_options;
