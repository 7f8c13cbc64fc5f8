//! `protocol-check --seat FILE`: a short, fixed set of exchanges a runtime
//! author runs before the matrix. Each exchange is one row of the suite
//! that leans on one part of `sharedos-runtime/2`; the seat's cell is
//! graded beside the embedded adversary's (a scripted seat) or must pass
//! (a prompted one). The first exchange it gets wrong is told in words,
//! with the section of `harness/process/PROTOCOL.md` that says otherwise.

use crate::args::ProtocolCheckArgs;
use crate::exit::Exit;
use crate::seat_start::{cannot_start, DOCUMENT};
use sharedos_conformance::run::process_seats::try_start;
use sharedos_conformance::suite::matrix::{run_all, PlannedResult, RunSettings};
use sharedos_grading::grade::evidence::GradingEvidence;
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::input::built_in_column::ADVERSARY_ID;
use sharedos_grading::input::loader::{load_seat, load_suite, Suite};
use sharedos_grading::input::seat::SeatKind;
use sharedos_grading::plan::{plan, Selection};
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::ExecutionRecord;

/// One exchange: a row, what it leans on, and where the document says how.
struct Exchange {
    case: &'static str,
    condition: &'static str,
    what: &'static str,
    section: &'static str,
}

/// The exchanges, in the order a runtime is usually written.
const EXCHANGES: &[Exchange] = &[
    Exchange {
        case: "forged-grant",
        condition: "baseline",
        what: "calls, their answers, the report and its fence",
        section: "Scripted seats: receipts",
    },
    Exchange {
        case: "hidden-tool",
        condition: "baseline",
        what: "a call SharedOS refuses",
        section: "Scripted seats: receipts",
    },
    Exchange {
        case: "grant-material",
        condition: "baseline",
        what: "an inspection of the request",
        section: "Scripted seats: receipts",
    },
    Exchange {
        case: "budget-exceeded",
        condition: "tool-call-ceiling",
        what: "a call past the budget",
        section: "Scripted seats: receipts",
    },
    Exchange {
        case: "annotate-last-write-wins",
        condition: "baseline",
        what: "annotate and its ack",
        section: "Messages a runtime writes",
    },
    Exchange {
        case: "drain-in-flight-call-completes",
        condition: "grace-five-seconds",
        what: "a concurrent call, a timed step, draining",
        section: "Time and wait",
    },
    Exchange {
        case: "annotate-kept-on-cancelled",
        condition: "one-second-limit",
        what: "a stall cut by abort",
        section: "Scripted seats: endings",
    },
    Exchange {
        case: "annotate-dropped-after-close",
        condition: "baseline",
        what: "steps after closed",
        section: "After the outcome: closed and report",
    },
    Exchange { case: "escalation", condition: "baseline", what: "an escalation", section: "Scripted seats: endings" },
    Exchange {
        case: "annotate-kept-on-plugin-fail",
        condition: "baseline",
        what: "a failed turn",
        section: "Scripted seats: endings",
    },
    Exchange {
        case: "runtime-crashed",
        condition: "baseline",
        what: "a thrown turn",
        section: "Scripted seats: endings",
    },
    Exchange {
        case: "annotate-kept-on-invalid-outcome",
        condition: "baseline",
        what: "a malformed outcome",
        section: "Scripted seats: endings",
    },
    Exchange {
        case: "revoked-mid-turn",
        condition: "revoked-while-the-first-turn-runs",
        what: "two turns on one process",
        section: "The exchange",
    },
];

/// `protocol-check --seat FILE`.
pub fn protocol_check(args: &ProtocolCheckArgs) -> Exit {
    let (mut suite, seat) = match load_suite(&args.root).and_then(|suite| Ok((suite, load_seat(&args.seat)?))) {
        Ok(loaded) => loaded,
        Err(error) => {
            tell!("error: {error}");
            return Exit::InvalidInput;
        }
    };
    if seat.mcp.is_some() {
        tell!(
            "error: protocol-check is for scripted and prompted seats; an mcp seat speaks MCP, not sharedos-runtime/2"
        );
        return Exit::Usage;
    }
    say!("protocol-check: {} ({})", seat.column_id, args.seat.display());
    match try_start(&seat) {
        Ok(manifest) => say!("ok    starts: said ready, as {} {}", manifest.id, manifest.version),
        Err(breach) => {
            say!("FAIL  starts");
            say!("{}", indent(&cannot_start(&seat, &breach)));
            return Exit::ConformanceFailure;
        }
    }
    let (column, scripted) = (seat.column_id.clone(), seat.kind == SeatKind::Scripted);
    // A committed seat checked by its own file is seated once, from it.
    suite.seats.retain(|committed| committed.column_id != column);
    if let Err(error) = suite.add_seat(seat) {
        tell!("error: {error}");
        return Exit::InvalidInput;
    }
    let results = run_exchanges(&suite, &column, scripted);
    let cell_of = |case: &str, column: &str| {
        results.iter().find(|(p, _)| p.key.case == case && p.key.column == column).map(|(planned, result)| match result
        {
            Some(Ok(run)) => Ok(Seen { cell: run.cell.clone(), evidence: run.grading.clone() }),
            Some(Err(error)) => Err(error.to_string()),
            None => planned
                .declared
                .clone()
                .map(|cell| Seen { cell, evidence: None })
                .ok_or_else(|| "the cell neither ran nor was declared".to_string()),
        })
    };
    for (n, exchange) in EXCHANGES.iter().enumerate() {
        let name = format!("{} ({}/{})", exchange.what, exchange.case, exchange.condition);
        let (Some(seated), reference) = (cell_of(exchange.case, &column), cell_of(exchange.case, ADVERSARY_ID)) else {
            tell!("error: the suite at {} has no row {}/{}", args.root.display(), exchange.case, exchange.condition);
            return Exit::InvalidInput;
        };
        let wrong = match seated {
            Err(error) => Some(format!("the harness failed to run the cell: {error}")),
            Ok(seen) => what_differs(&seen, reference.and_then(Result::ok).as_ref(), exchange),
        };
        match wrong {
            None => say!("ok    {name}"),
            Some(words) => {
                say!("FAIL  {name}");
                say!("{}", indent(&words));
                say!("protocol-check: {n} of {} exchanges right; stopped at the first one wrong", EXCHANGES.len());
                return Exit::ConformanceFailure;
            }
        }
    }
    say!(
        "protocol-check: all {} exchanges right; now run the matrix with `run --seat {}`",
        EXCHANGES.len(),
        args.seat.display()
    );
    Exit::Success
}

/// Runs every exchange's row in the seat's column and, for a scripted
/// seat, the adversary's, on one worker: the seat's process serves them in
/// order, as it would a part of the matrix.
fn run_exchanges(suite: &Suite, column: &str, scripted: bool) -> Vec<PlannedResult> {
    let mut columns = vec![column.to_string()];
    if scripted {
        columns.push(ADVERSARY_ID.to_string());
    }
    let cases = EXCHANGES.iter().map(|e| e.case.to_string()).collect();
    let planned: Vec<_> = plan(suite, &Selection { cases, columns, ..Selection::default() })
        .into_iter()
        .filter(|cell| EXCHANGES.iter().any(|e| e.case == cell.key.case && e.condition == cell.key.condition))
        .collect();
    run_all(suite, &planned, RunSettings { jobs: 1, keep_grading: true, ..RunSettings::default() })
}

/// A cell as an exchange shows it: its verdict, and the records it was
/// graded from, which say where a runtime stopped.
struct Seen {
    cell: Cell,
    evidence: Option<GradingEvidence>,
}

/// What the seat's cell got wrong, against the adversary's when there is
/// one (a scripted seat) or against a pass (a prompted seat). A breach is
/// what the runtime got wrong whatever the adversary did, so the
/// adversary's words are left out beside it; a turn the runtime let run to
/// its deadline after an answer says where it stopped.
fn what_differs(seen: &Seen, reference: Option<&Seen>, exchange: &Exchange) -> Option<String> {
    let cell = &seen.cell;
    let (expected, detail) = match reference {
        Some(reference) if same_grade(cell, &reference.cell) => return None,
        Some(reference) => (reference.cell.status.as_str(), reference.cell.detail.clone()),
        None if matches!(cell.status.as_str(), "pass" | "not_applicable") => return None,
        None => ("pass", None),
    };
    let mut words = format!("the cell is `{}` where it should be `{expected}`", cell.status.as_str());
    if let Some(got) = &cell.detail {
        words.push_str(&format!("\nwhat the runtime did: {got}"));
    }
    let breach = breach_section(cell.detail.as_deref());
    if let (Some(detail), None) = (detail, breach) {
        words.push_str(&format!("\nwhat the embedded adversary did: {detail}"));
    }
    let stopped = breach.is_none().then(|| stopped_after_an_answer(seen, reference)).flatten();
    if let Some(stopped) = &stopped {
        words.push_str(&format!("\nwhere it stopped: {stopped}"));
    }
    let section = breach.or(stopped.map(|_| "Framing")).unwrap_or(exchange.section);
    words.push_str(&format!("\nsee {DOCUMENT}, section \"{section}\""));
    Some(words)
}

/// Where a runtime stopped when it was stopped where the adversary ended
/// its turn itself, and the last thing its record shows is the answer to a
/// call: after it, the runtime asked nothing and sent no ending until the
/// deadline, as a runtime does that waits for the answer under an id it
/// never sent.
fn stopped_after_an_answer(seen: &Seen, reference: Option<&Seen>) -> Option<String> {
    let last = |seen: &Seen| seen.evidence.as_ref().and_then(|e| e.records.last().cloned());
    let (record, reference) = (last(seen)?, reference.map(last));
    let cancelled = |record: &ExecutionRecord| record.execution.status == ExecutionStatus::Cancelled;
    if !cancelled(&record) || reference.flatten().is_some_and(|r| cancelled(&r)) {
        return None;
    }
    let mut events = record.execution.events.iter().rev().skip_while(|e| e.kind.starts_with("turn."));
    let answered = events.next().filter(|e| e.kind == "tool.completed")?;
    let field = |key: &str| answered.data.get(key).and_then(|v| v.as_str()).unwrap_or("?").to_string();
    Some(format!(
        "the harness answered call `{}` (`{}`, {}), and the runtime then asked nothing and sent no ending until the \
         turn was stopped, as a runtime does that waits for the answer under another id than the one its \
         `invokeTool` gave (each answer carries its request's `id`)",
        field("callId"),
        field("tool"),
        field("status"),
    ))
}

/// Whether two cells grade alike, whichever column each is in.
fn same_grade(a: &Cell, b: &Cell) -> bool {
    let mut b = b.clone();
    b.column_id.clone_from(&a.column_id);
    *a == b
}

/// A breach's section: a line after the runtime's ending is the fence's
/// business; every other violation is in the document's table.
fn breach_section(detail: Option<&str>) -> Option<&'static str> {
    let detail = detail.filter(|d| d.contains("the runtime broke sharedos-runtime/"))?;
    let late = ["after its outcome (", "after its report ("].iter().any(|phase| detail.contains(phase));
    Some(if late { "After the outcome: closed, report and fence" } else { "Violations" })
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("      {line}")).collect::<Vec<_>>().join("\n")
}
