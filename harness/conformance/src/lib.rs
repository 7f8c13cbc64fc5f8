#![forbid(unsafe_code)]
pub mod adversary;
pub mod case;
pub mod evidence;
pub mod golden;
pub mod identity;
pub mod judge;
pub mod known_tools;
pub mod loader;
pub mod manifest;
pub mod markdown;
pub mod output;
pub mod receipt;
pub mod record;
pub mod run;
pub mod script;
pub mod world;
pub mod world_options;
