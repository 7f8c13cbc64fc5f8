//! SharedOS's own MCP epoch (ADR 0027; D53): every answer says which epoch
//! the server speaks, and a request pinned to another one is refused
//! before anything is listed or invoked.

use rmcp::model::{ErrorData, JsonObject, RequestMetaObject};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

/// The `_meta` key naming the epoch, on answers and on pinned requests.
pub const META_PROTOCOL_VERSION: &str = "sharedos/protocolVersion";
/// The epoch this server speaks.
pub const EPOCH: &str = "2";
/// `data.code` of a request pinned to another epoch.
pub const UNSUPPORTED_PROTOCOL_VERSION: &str = "unsupported_protocol_version";

/// Refuses a request whose `params._meta` pins an epoch other than
/// [`EPOCH`] (a non-string pin included) with `-32602`, wherever rmcp left
/// that `_meta`: in the request's context, or, for some requests, in its
/// params. One that pins none, or this one, passes.
///
/// # Errors
/// The `-32602` answer, its `data` naming the code and the supported epoch.
pub fn check_pins(params: Option<&RequestMetaObject>, context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    check_pin(params.map(|meta| &meta.0 .0))?;
    check_pin(Some(&context.meta.0 .0))
}

fn check_pin(meta: Option<&JsonObject>) -> Result<(), ErrorData> {
    match meta.and_then(|meta| meta.get(META_PROTOCOL_VERSION)) {
        None => Ok(()),
        Some(pinned) if pinned == EPOCH => Ok(()),
        Some(pinned) => Err(ErrorData::invalid_params(
            format!("speak SharedOS MCP epoch {pinned}: this server speaks epoch {EPOCH}"),
            Some(json!({ "code": UNSUPPORTED_PROTOCOL_VERSION, "supportedVersion": EPOCH })),
        )),
    }
}
