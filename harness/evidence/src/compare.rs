//! `diff`: two manifests (or bundles) compared.

pub mod diff;
pub mod read;
pub mod render;
pub mod significance;
