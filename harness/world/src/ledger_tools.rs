//! Ledger tools whose handlers take virtual time and honour the abort: a
//! non-idempotent transfer that debits, waits, then credits (an abort in
//! between leaves it half done); an idempotent limit setting; and a read
//! that takes time. Each resolves `ledger / [accounts, <account>] / <action>`.

use super::arguments::{self as args, object_schema, shared};
use super::constants::LEDGER;
use super::file_tools::owned_requirement;
use super::ledger::{Ledger, LedgerError, Movement};
use super::results;
use futures::future::LocalBoxFuture;
use serde_json::{json, Map, Value};
use sharedos_kernel::ports::{HandlerError, ParsedCall, Resolution, ToolHandler};
use sharedos_model::access::AccessContext;
use sharedos_model::capability::{is_segment, Requirement, ResourceRef};
use sharedos_model::instant::Instant;
use sharedos_model::tool::{ReadWrite, SharedObject, ToolAnnotations, ToolDefinition, ToolResult};
use sharedos_port::signal::AbortSignal;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

use std::time::Duration;

/// Every ledger tool's definition, built once (see [`shared`]).
static DEFINITIONS: LazyLock<[(LedgerTool, Arc<ToolDefinition>); 3]> =
    LazyLock::new(|| LedgerTool::ALL.map(|tool| (tool, Arc::new(tool.build_definition()))));

/// The folder every account lives under.
pub const ACCOUNTS: &str = "accounts";
/// Source of the ledger tools.
pub const LEDGER_SOURCE: &str = "native";

/// The three ledger tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LedgerTool {
    /// `ledger.transfer`: debit, wait, credit. Not idempotent.
    Transfer,
    /// `ledger.set_limit`: an idempotent write.
    SetLimit,
    /// `ledger.balance`: a read that takes time.
    Balance,
}

impl LedgerTool {
    /// Registration order.
    pub const ALL: [LedgerTool; 3] = [LedgerTool::Transfer, LedgerTool::SetLimit, LedgerTool::Balance];

    /// The tool name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            LedgerTool::Transfer => "ledger.transfer",
            LedgerTool::SetLimit => "ledger.set_limit",
            LedgerTool::Balance => "ledger.balance",
        }
    }

    /// The capability action.
    #[must_use]
    pub fn action(self) -> &'static str {
        match self {
            LedgerTool::Transfer => "transfer",
            LedgerTool::SetLimit => "configure",
            LedgerTool::Balance => "read",
        }
    }

    /// The account argument the requirement is scoped to.
    fn account_key(self) -> &'static str {
        if self == LedgerTool::Transfer {
            "from"
        } else {
            "account"
        }
    }

    fn input_schema(self) -> Map<String, Value> {
        let account = json!({"type": "string", "minLength": 1, "maxLength": 256});
        match self {
            LedgerTool::Transfer => object_schema(
                json!({"from": account, "to": account, "amount": {"type": "integer", "minimum": 1}}),
                &["from", "to", "amount"],
                false,
            ),
            LedgerTool::SetLimit => object_schema(
                json!({"account": account, "limit": {"type": "integer", "minimum": 0}}),
                &["account", "limit"],
                false,
            ),
            LedgerTool::Balance => object_schema(json!({"account": account}), &["account"], false),
        }
    }

    /// The registry definition.
    #[must_use]
    pub fn definition(self) -> ToolDefinition {
        (*shared(&*DEFINITIONS, self, LedgerTool::build_definition)).clone()
    }

    fn build_definition(self) -> ToolDefinition {
        let (description, read_write, annotations) = match self {
            LedgerTool::Transfer => ("Move an amount from one account to another.", ReadWrite::Write, None),
            LedgerTool::SetLimit => (
                "Set an account's spending limit; repeating it changes nothing.",
                ReadWrite::Write,
                Some(ToolAnnotations { idempotent: Some(true), ..ToolAnnotations::default() }),
            ),
            LedgerTool::Balance => (
                "Read an account's balance.",
                ReadWrite::Read,
                Some(ToolAnnotations { read_only: Some(true), ..ToolAnnotations::default() }),
            ),
        };
        ToolDefinition {
            name: self.name().to_string(),
            description: description.to_string(),
            namespace: LEDGER.to_string(),
            source: LEDGER_SOURCE.to_string(),
            read_write,
            input_schema: SharedObject::new(self.input_schema()),
            output_schema: None,
            required_capability: Requirement {
                resource: ResourceRef { namespace: LEDGER.to_string(), path: vec![ACCOUNTS.to_string()], owner: None },
                action: self.action().to_string(),
            },
            annotations,
            metadata: None,
        }
    }

    fn parse(self, input: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        let account = |key: &str| -> Result<String, String> {
            let id = args::string(input, key)?;
            if is_segment(&id) {
                Ok(id)
            } else {
                Err(format!("`{key}` must be an account id"))
            }
        };
        let positive = |key: &str, min: u64| -> Result<u64, String> {
            match input.get(key).and_then(Value::as_u64) {
                Some(n) if n >= min && i64::try_from(n).is_ok() => Ok(n),
                _ => Err(format!("`{key}` must be an integer of at least {min}")),
            }
        };
        let mut out = Map::new();
        match self {
            LedgerTool::Transfer => {
                args::only_keys(input, &["from", "to", "amount"])?;
                out.insert("from".into(), account("from")?.into());
                out.insert("to".into(), account("to")?.into());
                out.insert("amount".into(), positive("amount", 1)?.into());
            }
            LedgerTool::SetLimit => {
                args::only_keys(input, &["account", "limit"])?;
                out.insert("account".into(), account("account")?.into());
                out.insert("limit".into(), positive("limit", 0)?.into());
            }
            LedgerTool::Balance => {
                args::only_keys(input, &["account"])?;
                out.insert("account".into(), account("account")?.into());
            }
        }
        Ok(out)
    }
}

/// How long each ledger tool works, in virtual milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerTimings {
    /// Between the debit and the credit.
    pub transfer_ms: u64,
    /// Before the limit is written.
    pub set_limit_ms: u64,
    /// Before the balance is read.
    pub balance_ms: u64,
}

impl Default for LedgerTimings {
    fn default() -> LedgerTimings {
        LedgerTimings { transfer_ms: 3000, set_limit_ms: 0, balance_ms: 1000 }
    }
}

/// One ledger tool over a shared ledger.
pub struct LedgerHandler {
    tool: LedgerTool,
    definition: Arc<ToolDefinition>,
    ledger: Rc<Ledger>,
    timings: LedgerTimings,
}

fn text(call: &ParsedCall, key: &str) -> String {
    call.arguments.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn number(call: &ParsedCall, key: &str) -> i64 {
    call.arguments.get(key).and_then(Value::as_i64).unwrap_or_default()
}

/// Waits `ms` of virtual time unless `signal` fires first.
async fn work(ms: u64, signal: &AbortSignal) -> Result<(), HandlerError> {
    if ms == 0 {
        return Ok(());
    }
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
        () = signal.aborted() => Err(HandlerError::Aborted),
    }
}

fn finished_at(context: &AccessContext, ms: u64) -> String {
    match Instant::parse(&context.now) {
        Some(start) => start.plus_millis(i64::try_from(ms).unwrap_or(i64::MAX)).to_rfc3339(),
        None => context.now.clone(),
    }
}

impl LedgerHandler {
    /// `tool` over `ledger`, working for `timings`.
    #[must_use]
    pub fn new(tool: LedgerTool, ledger: Rc<Ledger>, timings: LedgerTimings) -> LedgerHandler {
        LedgerHandler { tool, definition: shared(&*DEFINITIONS, tool, LedgerTool::build_definition), ledger, timings }
    }

    async fn run(
        &self,
        context: &AccessContext,
        call: &ParsedCall,
        signal: &AbortSignal,
    ) -> Result<ToolResult, HandlerError> {
        let answer = |outcome: Result<Value, LedgerError>, ms: u64| match outcome {
            Ok(output) => results::succeeded(call, output, &finished_at(context, ms)),
            Err(e) => results::failed(call, e.code(), &e.to_string(), &finished_at(context, ms)),
        };
        match self.tool {
            LedgerTool::Transfer => {
                let (from, to, amount) = (text(call, "from"), text(call, "to"), number(call, "amount"));
                if let Err(e) = self.ledger.balance(&to) {
                    return Ok(answer(Err(e), 0));
                }
                if let Err(e) = self.ledger.post(&call.id, Movement::Debit, &from, amount) {
                    return Ok(answer(Err(e), 0));
                }
                work(self.timings.transfer_ms, signal).await?;
                let credited = self.ledger.post(&call.id, Movement::Credit, &to, amount);
                Ok(answer(
                    credited.map(|_| json!({"from": from, "to": to, "amount": amount})),
                    self.timings.transfer_ms,
                ))
            }
            LedgerTool::SetLimit => {
                work(self.timings.set_limit_ms, signal).await?;
                let (account, limit) = (text(call, "account"), number(call, "limit"));
                let set = self.ledger.set_limit(&account, limit).map(|()| json!({"account": account, "limit": limit}));
                Ok(answer(set, self.timings.set_limit_ms))
            }
            LedgerTool::Balance => {
                work(self.timings.balance_ms, signal).await?;
                let account = text(call, "account");
                let read = self.ledger.balance(&account).map(|b| json!({"account": account, "balance": b}));
                Ok(answer(read, self.timings.balance_ms))
            }
        }
    }
}

impl ToolHandler for LedgerHandler {
    fn definition(&self) -> &Arc<ToolDefinition> {
        &self.definition
    }

    fn parse_arguments(&self, arguments: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        self.tool.parse(arguments)
    }

    fn resolve_requirement(&self, context: &AccessContext, call: &ParsedCall) -> Option<Result<Resolution, String>> {
        let account = text(call, self.tool.account_key());
        Some(Ok(
            owned_requirement(LEDGER, vec![ACCOUNTS.to_string(), account], self.tool.action(), &context.owner).into()
        ))
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
            self.run(context, call, signal).await
        })
    }
}

/// The three ledger tools over `ledger`, in registration order.
#[must_use]
pub fn ledger_tools(ledger: &Rc<Ledger>, timings: LedgerTimings) -> Vec<Rc<dyn ToolHandler>> {
    LedgerTool::ALL
        .into_iter()
        .map(|tool| Rc::new(LedgerHandler::new(tool, Rc::clone(ledger), timings)) as Rc<dyn ToolHandler>)
        .collect()
}
