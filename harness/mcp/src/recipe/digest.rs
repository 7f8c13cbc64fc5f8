//! A recipe's digest: what a recipe writes and starts for a turn, with
//! every value that changes from turn to turn held fixed, hashed. Two
//! columns with the same CLI version but another recipe (a tool left on,
//! another flag) ran different harnesses, and their manifests say so.

use super::{mcp_recipe, McpRecipe, RecipeError, RecipeInput};
use crate::harness::{Connection, Transport};
use crate::home::TurnHome;
use serde_json::json;
use sha2::{Digest, Sha256};
use sharedos_drivers::vendor::Vendor;
use sharedos_scripted_model::server::ModelEndpoint;
use std::collections::BTreeMap;
use std::path::Path;

/// What a seat adds to its vendor's recipe.
#[derive(Debug, Clone, Copy)]
pub struct SeatRecipe<'a> {
    /// Whose recipe.
    pub vendor: Vendor,
    /// How the CLI reaches the server.
    pub transport: Transport,
    /// Whether the CLI is pointed at the scripted model.
    pub scripted_model: bool,
    /// The seat's arguments, appended to the recipe's.
    pub args: &'a [String],
}

/// The SHA-256 (hex) of the recipe `seat` gets, with the turn's server,
/// paths, prompt, ids, token and keys replaced by fixed stand-ins. The
/// seat's variables are left out: they may hold the user's keys.
///
/// # Errors
/// [`RecipeError`] when no recipe can be written (it can for these values).
pub fn recipe_digest(seat: SeatRecipe<'_>) -> Result<String, RecipeError> {
    let connection = match seat.transport {
        Transport::Http => Connection::Http { url: "http://127.0.0.1:1/mcp".into(), token: Some("TOKEN".into()) },
        Transport::Stdio => Connection::Stdio { command: "RELAY".into(), args: vec!["SOCKET".into()] },
        Transport::InMemory => return Err(RecipeError::InMemory),
    };
    let workspace = Path::new("/WORKSPACE");
    let home = TurnHome { home: workspace.join("home"), tmp: workspace.join("tmp"), work: workspace.join("work") };
    let model = ModelEndpoint { base_url: "http://127.0.0.1:2".into(), key: "KEY".into() };
    let seat_env = BTreeMap::new();
    let input = RecipeInput {
        server_name: "sharedos",
        connection: &connection,
        prompt: "PROMPT",
        execution_id: "EXECUTION",
        workspace,
        home: &home,
        model: seat.scripted_model.then_some(&model),
        seat_env: &seat_env,
    };
    let recipe = mcp_recipe(seat.vendor, &input)?;
    Ok(hex::encode(Sha256::digest(described(&recipe, seat.args).to_string())))
}

/// The recipe as JSON, keys sorted (`serde_json`'s map is ordered).
fn described(recipe: &McpRecipe, seat_args: &[String]) -> serde_json::Value {
    let files: BTreeMap<&str, &str> =
        recipe.files.iter().map(|file| (file.name.as_str(), file.contents.as_str())).collect();
    let args: Vec<&String> = recipe.args.iter().chain(seat_args).collect();
    json!({
        "files": files,
        "command": recipe.command,
        "args": args,
        "env": recipe.env,
        "stdin": recipe.stdin,
        "keepStdinOpen": recipe.keep_stdin_open,
        "cliRetries": recipe.cli_retries,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn digest(vendor: Vendor, args: &[String], scripted_model: bool) -> String {
        recipe_digest(SeatRecipe { vendor, transport: Transport::Http, scripted_model, args }).unwrap()
    }

    #[test]
    fn a_recipe_digest_is_stable_and_moves_with_the_vendor_the_model_and_the_seats_arguments() {
        let plain = digest(Vendor::ClaudeCode, &[], true);
        assert_eq!(plain.len(), 64);
        assert_eq!(plain, digest(Vendor::ClaudeCode, &[], true), "nothing of a turn's own is in it");
        let leaky = ["--tools".to_string(), "Bash,Read".to_string()];
        let others = [digest(Vendor::Codex, &[], true), digest(Vendor::ClaudeCode, &leaky, true)];
        assert!(others.iter().all(|other| *other != plain));
        assert_ne!(digest(Vendor::ClaudeCode, &[], false), plain, "the scripted model is part of the recipe");
    }
}
