//! The scripted model a real vendor CLI is pointed at: a server on loopback
//! that speaks the model APIs the pinned CLIs use, plays a row's calls and
//! ending, and witnesses every request the CLI sent and what it answered.

pub mod admission;
pub mod anthropic;
pub mod naming;
pub mod play;
pub mod responses;
pub mod server;
pub mod view;
