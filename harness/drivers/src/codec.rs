//! The four vendor wire codecs. Each file holds one vendor's protocol
//! (`interpret`, `describe_tools`, `encode_tool_result`), its frame writer,
//! and its reader for the CLI's real stream.

pub mod claude_code;
pub mod codex;
pub mod deepseek;
pub mod pi;
