//! Integration tests of `drivers`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod arbitrary;
mod child_process;
mod codec_claude_code;
mod codec_codex;
mod codec_contract;
mod codec_deepseek;
mod codec_pi;
mod eval_driver;
mod live_stream;
mod loop_decisions;
mod loop_draining;
mod loop_lifecycle;
mod model_driver;
mod real_streams;
mod seat;
mod support;
mod transcript;
mod wire;
