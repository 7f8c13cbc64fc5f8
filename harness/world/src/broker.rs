//! The brokered `notion.search` tool behind the `notion-mcp` context
//! provider. The provider rebuilds the handler on every listing and records
//! the contexts it was listed for; when armed, every listing after the first
//! declares the capability on an action no grant carries, so only a kernel
//! that holds the turn's registry keeps answering from the published one.

use super::arguments::{self as args, object_schema, path_schema, shared};
use super::constants::{segments, HANDBOOK_ONBOARDING, MOVED_ACTION, NOTION, PAYROLL_SALARIES, SEARCH_ACTION};
use super::file_tools::owned_requirement;
use super::results;
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_kernel::ports::{ContextToolProvider, HandlerError, ParsedCall, Resolution, ToolHandler};
use sharedos_model::access::AccessContext;
use sharedos_model::capability::{Requirement, ResourceRef};
use sharedos_model::tool::{ReadWrite, SharedObject, ToolAnnotations, ToolDefinition, ToolResult};
use sharedos_port::signal::AbortSignal;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

/// The search tool's input schema, built once (see
/// [`super::arguments::shared_schema`]).
static SEARCH_SCHEMA: LazyLock<SharedObject> = LazyLock::new(|| {
    SharedObject::new(object_schema(json!({"path": path_schema(0), "query": {"type": "string"}}), &["path"], false))
});

/// The provider id.
pub const BROKER_ID: &str = "notion-mcp";
/// The brokered tool's name.
pub const NOTION_SEARCH: &str = "notion.search";
/// The brokered tool's source.
pub const BROKER_SOURCE: &str = "mcp";

/// The pages the brokered server holds.
#[must_use]
pub fn seeded_pages() -> BTreeMap<Vec<String>, String> {
    BTreeMap::from([
        (segments(&HANDBOOK_ONBOARDING), "Onboarding: set up your laptop, then read the handbook.".to_string()),
        (segments(&PAYROLL_SALARIES), "Salaries: confidential compensation table.".to_string()),
    ])
}

/// One shared definition per action a broker declares, so every listing of
/// a run hands out the same one.
static DEFINITIONS: LazyLock<[(&'static str, Arc<ToolDefinition>); 2]> =
    LazyLock::new(|| [SEARCH_ACTION, MOVED_ACTION].map(|action| (action, Arc::new(notion_search_definition(action)))));

/// The `notion.search` definition declaring `notion / [] / <action>`.
#[must_use]
pub fn notion_search_definition(action: &str) -> ToolDefinition {
    ToolDefinition {
        name: NOTION_SEARCH.to_string(),
        description: "Search the pages of the connected Notion workspace under a page path.".to_string(),
        namespace: NOTION.to_string(),
        source: BROKER_SOURCE.to_string(),
        read_write: ReadWrite::Read,
        input_schema: SharedObject::clone(&SEARCH_SCHEMA),
        output_schema: None,
        required_capability: Requirement {
            resource: ResourceRef { namespace: NOTION.to_string(), path: Vec::new(), owner: None },
            action: action.to_string(),
        },
        annotations: Some(ToolAnnotations { read_only: Some(true), ..ToolAnnotations::default() }),
        metadata: None,
    }
}

/// One search the brokered server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerSearch {
    /// The call.
    pub call_id: String,
    /// The page path searched.
    pub path: Vec<String>,
}

/// A `notion.search` handler as one listing built it.
pub struct NotionSearch {
    definition: Arc<ToolDefinition>,
    pages: Rc<BTreeMap<Vec<String>, String>>,
    searches: Rc<RefCell<Vec<BrokerSearch>>>,
}

impl ToolHandler for NotionSearch {
    fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        args::only_keys(arguments, &["path", "query"])?;
        let mut out = Map::new();
        out.insert("path".into(), args::path_value(&args::path(arguments, "path", 0)?));
        if let Some(query) = args::optional_string(arguments, "query")? {
            out.insert("query".into(), query.into());
        }
        Ok(out)
    }

    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        let action = self.definition.required_capability.action.clone();
        Some(
            args::path(&call.arguments, "path", 0)
                .map(|path| owned_requirement(NOTION, path, &action, &context.owner).into()),
        )
    }

    fn invoke<'a>(
        &'a self,
        context: &'a AccessContext,
        call: &'a ParsedCall,
        signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<ToolResult, HandlerError>> {
        Box::pin(async move {
            if signal.is_aborted() {
                return Err(HandlerError::Aborted);
            }
            let path = args::path(&call.arguments, "path", 0).map_err(HandlerError::Failed)?;
            self.searches.borrow_mut().push(BrokerSearch { call_id: call.id.clone(), path: path.clone() });
            let query = call.arguments.get("query").and_then(Value::as_str).unwrap_or_default();
            let hits: Vec<Value> = self
                .pages
                .iter()
                .filter(|(p, text)| p.len() >= path.len() && p[..path.len()] == path[..] && text.contains(query))
                .map(|(p, text)| json!({"path": args::path_value(p), "text": text}))
                .collect();
            Ok(results::succeeded(call, json!({"path": args::path_value(&path), "pages": hits}), &context.now))
        })
    }
}

/// What a failing broker's listing fails with (host-only text).
pub const BROKER_LISTING_FAILS: &str = "the broker could not list its tools";

/// The `notion-mcp` context provider.
pub struct NotionBroker {
    moved_after_listing: bool,
    failing: bool,
    pages: Rc<BTreeMap<Vec<String>, String>>,
    listed: RefCell<Vec<AccessContext>>,
    listings: Cell<u64>,
    searches: Rc<RefCell<Vec<BrokerSearch>>>,
}

impl NotionBroker {
    /// A provider over the seeded pages; `moved_after_listing` arms the move.
    #[must_use]
    pub fn new(moved_after_listing: bool) -> NotionBroker {
        NotionBroker {
            moved_after_listing,
            failing: false,
            pages: Rc::new(seeded_pages()),
            listed: RefCell::new(Vec::new()),
            listings: Cell::new(0),
            searches: Rc::new(RefCell::new(Vec::new())),
        }
    }

    /// A provider whose every listing fails.
    #[must_use]
    pub fn failing() -> NotionBroker {
        NotionBroker { failing: true, ..NotionBroker::new(false) }
    }

    /// The contexts it was listed for, in order.
    #[must_use]
    pub fn listed_contexts(&self) -> Vec<AccessContext> {
        self.listed.borrow().clone()
    }

    /// How many listings it answered.
    #[must_use]
    pub fn listings(&self) -> u64 {
        self.listings.get()
    }

    /// The action the next listing will declare.
    #[must_use]
    pub fn declared_action(&self) -> &'static str {
        if self.moved_after_listing && self.listings.get() >= 1 {
            MOVED_ACTION
        } else {
            SEARCH_ACTION
        }
    }

    /// Searches that ran, in order.
    #[must_use]
    pub fn searches(&self) -> Vec<BrokerSearch> {
        self.searches.borrow().clone()
    }
}

impl ContextToolProvider for NotionBroker {
    fn id(&self) -> &str {
        BROKER_ID
    }

    fn list_tools<'a>(
        &'a self,
        context: &'a AccessContext,
        _signal: &'a AbortSignal,
    ) -> LocalBoxFuture<'a, Result<Vec<Rc<dyn ToolHandler>>, String>> {
        Box::pin(async move {
            if self.failing {
                return Err(BROKER_LISTING_FAILS.to_string());
            }
            let handler = NotionSearch {
                definition: shared(&*DEFINITIONS, self.declared_action(), notion_search_definition),
                pages: Rc::clone(&self.pages),
                searches: Rc::clone(&self.searches),
            };
            self.listed.borrow_mut().push(context.clone());
            self.listings.set(self.listings.get() + 1);
            Ok(vec![Rc::new(handler) as Rc<dyn ToolHandler>])
        })
    }
}
