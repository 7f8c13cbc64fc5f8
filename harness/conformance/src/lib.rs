#![forbid(unsafe_code)]
pub mod golden;
pub mod output;
pub mod record;
pub mod case;
pub mod identity;
pub mod known_tools;
pub mod loader;
pub mod script;
pub mod world_options;
pub mod world;
pub mod evidence;
pub mod judge;
pub mod manifest;
pub mod markdown;
pub mod receipt;
pub mod adversary;
pub mod run;
