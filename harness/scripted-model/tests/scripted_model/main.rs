//! The scripted model over HTTP, as a vendor CLI meets it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod peers;
mod server;
