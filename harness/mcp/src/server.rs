//! The turn-scoped MCP server: `initialize`, `tools/list` and `tools/call`
//! over rmcp, with every call handed to the turn through the bridge.

use crate::bridge::{BridgeSender, Invocation};
use crate::call_result::to_call_tool_result;
use crate::catalog::PublishedCatalog;
use crate::epoch::{check_pins, EPOCH, META_PROTOCOL_VERSION};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode, ErrorData,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ServerHandler;
use serde_json::json;
use std::borrow::Cow;
use std::sync::Arc;

/// The MCP revisions the server speaks; `initialize` settles on the newest
/// of them when a client asks for another or for none (D52).
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] =
    &[ProtocolVersion::V_2024_11_05, ProtocolVersion::V_2025_03_26, ProtocolVersion::V_2025_06_18];

/// The methods the server answers.
const KNOWN_METHODS: &[&str] = &["initialize", "ping", "tools/list", "tools/call"];

/// Who the server says it is, and what it tells the harness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// `serverInfo.name`, also the alias namespace (`sharedos` by default).
    pub name: String,
    /// `serverInfo.version`: the runtime manifest's version.
    pub version: String,
    /// The seat's instructions: the only words besides the prompt the
    /// harness is given (D40).
    pub instructions: Option<String>,
}

/// One turn's server.
#[derive(Debug, Clone)]
pub struct McpToolServer {
    catalog: Arc<PublishedCatalog>,
    bridge: BridgeSender,
    config: ServerConfig,
}

impl McpToolServer {
    /// A server publishing `catalog` that hands calls to `bridge`.
    #[must_use]
    pub fn new(catalog: Arc<PublishedCatalog>, bridge: BridgeSender, identity: &ServerIdentity) -> McpToolServer {
        let mut config = json!({
            "protocolVersion": ProtocolVersion::V_2025_06_18,
            "capabilities": { "tools": { "listChanged": false } },
            "serverInfo": { "name": identity.name, "version": identity.version },
            "_meta": { META_PROTOCOL_VERSION: EPOCH },
        });
        if let Some(instructions) = &identity.instructions {
            config["instructions"] = json!(instructions);
        }
        // The value above is an InitializeResult by construction; the
        // default would only drop the instructions, never panic.
        let config = serde_json::from_value(config).unwrap_or_else(|_| InitializeResult::default());
        McpToolServer { catalog, bridge, config }
    }
}

impl ServerHandler for McpToolServer {
    fn get_info(&self) -> ServerConfig {
        self.config.clone()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(SUPPORTED_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        check_pins(request.meta.as_ref(), &context)?;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.catalog.listed().clone())
    }

    /// rmcp hands over a request it could not read as its method's own;
    /// for a method the server has, that is a params error (D52).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if KNOWN_METHODS.contains(&request.method.as_str()) {
            return Err(ErrorData::invalid_params(format!("read the params of `{}`", request.method), None));
        }
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("find method `{}`", request.method), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Refused before the catalogue is read or anything invoked (D53).
        check_pins(request.meta.as_ref(), &context)?;
        let resolution = self.catalog.resolve(&request.name);
        let invocation = Invocation {
            tool: resolution.tool,
            arguments: request.arguments.unwrap_or_default(),
            alias: resolution.alias,
        };
        match self.bridge.invoke(invocation).await {
            Ok(result) => Ok(to_call_tool_result(&result, self.catalog.tool(&result.tool)).into()),
            // Not a refusal, which is always a tool result: the host rejected
            // the call (an audit outage, a closed bridge), so no result exists
            // to give, and the contract makes that `-32603` (D52).
            Err(error) => Err(ErrorData::internal_error(format!("failed to {error}"), None)),
        }
    }
}
