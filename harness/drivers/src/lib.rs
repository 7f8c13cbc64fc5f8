//! The driver seam of SharedOS: how a vendor's agent is seated inside the
//! envelope as a runtime.
//!
//! A [`standard_loop::StandardLoop`] is a `RuntimePlugin` that asks a driver
//! for one decision at a time and forwards every tool call to the host. Two
//! drivers fill the seat: a [`model_driver::ModelDriver`] speaking a model's
//! tool-call shape, and an [`eval_driver::EvalHarnessDriver`] speaking a
//! vendor CLI's wire format through a [`protocol::HarnessProtocol`] over a
//! transport (a recorded transcript, or a live child process). The four
//! vendor codecs live under [`codec`]; each also reads what the real CLI
//! writes ([`live`]), which the `decode` subcommand prints.
#![forbid(unsafe_code)]

pub mod child_process;
pub mod codec;
pub mod decision;
pub mod eval_driver;
pub mod frame;
pub mod live;
pub mod model_client;
pub mod model_driver;
pub mod model_wire;
pub mod protocol;
pub mod seat;
pub mod standard_loop;
pub mod tool_names;
pub mod transcript;
pub mod transport;
pub mod vendor;
pub mod wire;
