//! The MCP harness runtime: a `RuntimePlugin` that serves the turn's
//! catalogue to a harness running its own loop, and reads the turn's
//! ending from what the harness writes (D40, D44, D47, D49).

use crate::bridge::{open_bridge, CallIdMinter, CallStamp};
use crate::catalog::PublishedCatalog;
use crate::ending::harness_outcome;
use crate::harness::{HarnessExit, HarnessLaunch, McpHarness};
use crate::latch::EscalationLatch;
use crate::serve::{open, ServeOptions};
use crate::server::{McpToolServer, ServerIdentity};
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_drivers::seat::{seat_text, SeatTextOptions};
use sharedos_drivers::standard_loop::PROMPT_HASH_ANNOTATION;
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::host::RuntimeHost;
use sharedos_envelope::runtime::RuntimePlugin;
use sharedos_model::execution::{RuntimeManifest, RuntimeTurnRequest};
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_port::escalation::ESCALATION_TOOL;
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;
use std::sync::Arc;

/// The alias namespace and `serverInfo.name` unless a seat names another.
pub const DEFAULT_SERVER_NAME: &str = "sharedos";
/// The version of this runtime, as its manifest and `serverInfo` say.
pub const MCP_RUNTIME_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A model a harness is said to run: recorded, never selected (D51).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredModel {
    /// The model id.
    pub id: String,
    /// Its provider, when known.
    pub provider: Option<String>,
}

/// The runtime's manifest for a harness of `vendor`.
#[must_use]
pub fn mcp_manifest(vendor: Vendor) -> RuntimeManifest {
    let mut metadata = Map::new();
    metadata.insert("harness".into(), json!(vendor.id()));
    metadata.insert("toolshare".into(), json!("mcp"));
    metadata.insert("wireProtocol".into(), json!(vendor.protocol().id()));
    metadata.insert("executionModel".into(), json!("harness-owned-loop"));
    RuntimeManifest {
        id: format!("sharedos.mcp.{}", vendor.id()),
        version: MCP_RUNTIME_VERSION.to_string(),
        protocol_version: PROTOCOL_VERSION.to_string(),
        metadata: Some(metadata),
    }
}

/// The CLI a live seat starts, as its manifest records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliIdentity {
    /// The program's file name.
    pub name: String,
    /// The first line of its `--version`, when it printed one.
    pub version: Option<String>,
    /// The digest of the recipe that starts it ([`crate::recipe::recipe_digest`]).
    pub recipe_digest: Option<String>,
}

/// One harness seated behind MCP.
pub struct McpHarnessRuntime {
    vendor: Vendor,
    harness: Rc<dyn McpHarness>,
    server_name: String,
    model: Option<DeclaredModel>,
    cli: Option<CliIdentity>,
    mint: CallIdMinter,
    serve_options: ServeOptions,
}

impl std::fmt::Debug for McpHarnessRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHarnessRuntime")
            .field("vendor", &self.vendor)
            .field("harness", &self.harness.id())
            .field("server_name", &self.server_name)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl McpHarnessRuntime {
    /// `harness`, whose stdout is read by `vendor`'s codec, its calls given
    /// the SharedOS ids `mint` derives.
    #[must_use]
    pub fn new(vendor: Vendor, harness: Rc<dyn McpHarness>, mint: CallIdMinter) -> McpHarnessRuntime {
        McpHarnessRuntime {
            vendor,
            harness,
            server_name: DEFAULT_SERVER_NAME.to_string(),
            model: None,
            cli: None,
            mint,
            serve_options: ServeOptions::default(),
        }
    }

    /// The same runtime, serving over HTTP or stdio with `options`.
    #[must_use]
    pub fn with_serve_options(mut self, options: ServeOptions) -> McpHarnessRuntime {
        self.serve_options = options;
        self
    }

    /// The same runtime, recording `model` as the one the harness runs.
    #[must_use]
    pub fn with_model(mut self, model: DeclaredModel) -> McpHarnessRuntime {
        self.model = Some(model);
        self
    }

    /// The same runtime, its manifest naming `cli`.
    #[must_use]
    pub fn with_cli(mut self, cli: CliIdentity) -> McpHarnessRuntime {
        self.cli = Some(cli);
        self
    }

    /// How the harness was connected (D51, `harnessMetadata`).
    fn metadata(&self, catalog_hash: &str, aliases: &[(String, String)]) -> Map<String, Value> {
        let mut metadata = Map::new();
        metadata.insert("harness".into(), json!(self.harness.id()));
        metadata.insert("toolshare".into(), json!("mcp"));
        metadata.insert("mcpServer".into(), json!(self.server_name));
        metadata.insert("catalogHash".into(), json!(catalog_hash));
        if let Some(model) = &self.model {
            metadata.insert("model".into(), json!(model.id));
            if let Some(provider) = &model.provider {
                metadata.insert("modelProvider".into(), json!(provider));
            }
        }
        if !aliases.is_empty() {
            let aliases: Vec<Value> =
                aliases.iter().map(|(alias, tool)| json!({ "alias": alias, "tool": tool })).collect();
            metadata.insert("toolAliases".into(), Value::Array(aliases));
        }
        metadata
    }

    async fn run_turn(
        &self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> Result<Value, RuntimeFailure> {
        let text =
            seat_text(&SeatTextOptions::default(), &request).map_err(|e| RuntimeFailure::message(e.to_string()))?;
        // Stated before anything is served or started, so a turn cancelled
        // at any later point still records what it was told (D40).
        host.annotate(PROMPT_HASH_ANNOTATION, json!(text.prompt_hash)).map_err(RuntimeFailure::Host)?;
        let catalog = Arc::new(
            PublishedCatalog::new(&request.execution_id, &request.tools)
                .map_err(|e| RuntimeFailure::message(e.to_string()))?,
        );
        let now = request.context.now.clone();
        let offered = request.tools.iter().any(|tool| tool.name == ESCALATION_TOOL);
        let latch = EscalationLatch::new(
            host,
            offered,
            Rc::new({
                let now = now.clone();
                move || now.clone()
            }),
        );
        let stamp = CallStamp { trace_id: request.context.trace_id.clone(), now: Rc::new(move || now.clone()) };
        // Declared before the bridge so that, should the envelope drop this
        // turn at its hard deadline, the bridge is dropped (closed) first
        // and the server and its workspace after it (D44).
        let serving;
        let (mut bridge, sender) = open_bridge();
        let identity = ServerIdentity {
            name: self.server_name.clone(),
            version: MCP_RUNTIME_VERSION.to_string(),
            instructions: text.instructions.clone(),
        };
        let server = McpToolServer::new(Arc::clone(&catalog), sender, &identity);
        let opened = open(self.harness.transport(), server, &self.serve_options)
            .await
            .map_err(|e| RuntimeFailure::message(format!("failed to {e}")))?;
        serving = opened.serving;
        let launch = HarnessLaunch {
            execution_id: request.execution_id.clone(),
            prompt: text.prompt.clone(),
            server_name: self.server_name.clone(),
            connection: opened.connection,
            workspace: opened.workspace,
            signal,
        };
        let exit = tokio::select! {
            exit = self.harness.run(launch) => exit,
            // The bridge's channel ends only with the server; a harness that
            // left still decides the turn, by its exit.
            () = async { bridge.serve(&latch, &self.mint, &stamp).await; std::future::pending().await } => {
                HarnessExit::Stopped
            }
        };
        // Nothing outlives the turn, in this order (D44): the bridge first,
        // so a harness still mid-call is refused by a closed bridge, then
        // the server, then the workspace.
        let aliases = bridge.aliases();
        drop(bridge);
        serving.close().await;
        if exit == HarnessExit::Stopped {
            return Err(RuntimeFailure::message("run the MCP harness: the turn stopped before it exited"));
        }
        let outcome = harness_outcome(self.vendor, &exit);
        Ok(latch.settle(outcome, self.metadata(&catalog.catalog_hash, &aliases)))
    }
}

impl RuntimePlugin for McpHarnessRuntime {
    fn manifest(&self) -> RuntimeManifest {
        let mut manifest = mcp_manifest(self.vendor);
        if let (Some(cli), Some(metadata)) = (&self.cli, manifest.metadata.as_mut()) {
            metadata.insert("cli".into(), json!(cli.name));
            if let Some(version) = &cli.version {
                metadata.insert("cliVersion".into(), json!(version));
            }
            if let Some(digest) = &cli.recipe_digest {
                metadata.insert("recipeDigest".into(), json!(digest));
            }
        }
        manifest
    }

    fn run<'a>(
        &'a self,
        request: Rc<RuntimeTurnRequest>,
        host: RuntimeHost,
        signal: AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Value, RuntimeFailure>> {
        Box::pin(self.run_turn(request, host, signal))
    }
}
