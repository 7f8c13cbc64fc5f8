//! Cost of the matrix (plan, run, report, golden comparison), of one cell,
//! and of one turn's execution record (assembly with validation, then the
//! canonical serialisation its record hash covers).
//!
//! `PROFILE_MATRIX=<n>` runs the full matrix `n` times on one worker and
//! `PROFILE_CELL=<n>` runs the benchmarked cell `n` times, then exits
//! without criterion, for an instruction-count profiler.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, Criterion};
use sharedos_conformance::run::process_seats::WorkerSeats;
use sharedos_conformance::run::turns::run_turns;
use sharedos_conformance::suite::cell::{assembly_input, run_cell, RecordContext};
use sharedos_conformance::suite::matrix::RunSettings;
use sharedos_conformance::suite::report::{run_and_report, Report};
use sharedos_grading::column::column;
use sharedos_grading::identity::cell_identity::{Identity, WorldIdentity};
use sharedos_grading::identity::sets::record_hash;
use sharedos_grading::identity::world::policy_hash;
use sharedos_grading::input::built_in_column::ADVERSARY_ID;
use sharedos_grading::input::loader::{load_suite, Suite};
use sharedos_grading::input::world::World;
use sharedos_grading::output::golden::GoldenComparison;
use sharedos_grading::plan::{locate, plan, Selection};
use sharedos_grading::record::assemble::assemble_record;
use sharedos_grading::record::turn::ExecutedTurn;
use sharedos_grading::vocab::CellKey;
use sharedos_model::audit::AuditEvent;
use sharedos_model::tool::ToolDefinition;
use sharedos_process::message::Clock;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

// The CLI's allocator, so these figures are the ones a `check` run sees.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CASE: &str = "forged-grant";
const CONDITION: &str = "baseline";
const COLUMN: &str = "adversary-embedded";

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn suite() -> Suite {
    load_suite(&repository_root()).expect("the suite loads")
}

/// What `check` does after loading the suite: plan, run on `jobs` workers,
/// build the reports, and compare every run cell with its golden file.
fn matrix_run(suite: &Suite, selection: &Selection, jobs: usize) -> Report {
    let planned = plan(suite, selection);
    let golden = repository_root().join("golden");
    let settings = RunSettings { jobs, golden: Some(&golden), keep_grading: false, repeat: 1, progress: None };
    let report = run_and_report(suite, selection, &planned, settings).expect("the report builds");
    for run in &report.cells {
        black_box(matches!(run.golden, Some(GoldenComparison::Same)));
    }
    report
}

fn whole_matrix(c: &mut Criterion, suite: &Suite) {
    let adversary = Selection { columns: vec![ADVERSARY_ID.to_string()], ..Selection::default() };
    let everything = Selection::default();
    let mut group = c.benchmark_group("matrix");
    group.sample_size(10);
    group.bench_function("adversary_column_jobs1", |b| b.iter(|| black_box(matrix_run(suite, &adversary, 1))));
    group.bench_function("full_jobs1", |b| b.iter(|| black_box(matrix_run(suite, &everything, 1))));
    group.bench_function("full_jobs2", |b| b.iter(|| black_box(matrix_run(suite, &everything, 2))));
    group.finish();
}

/// One executed turn and the audit trail its record is assembled from,
/// captured after running the cell's turns once.
struct RecordInputs {
    turn: ExecutedTurn,
    audit: Vec<AuditEvent>,
    identity: Identity,
    tools: std::sync::Arc<[ToolDefinition]>,
}

fn cell_key() -> CellKey {
    CellKey { case: CASE.into(), condition: CONDITION.into(), column: COLUMN.into() }
}

fn record_inputs(suite: &Suite) -> RecordInputs {
    let (case, condition, script) = locate(suite, &cell_key()).expect("the cell exists");
    let script = Rc::new(script.clone());
    let kind = column(&[], COLUMN).expect("the column exists").kind;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("the runtime starts");
    let (turn, audit, identity, tools) = runtime.block_on(async {
        let world = World::build(&condition.world).expect("the world builds");
        let identity = Identity::new(
            case,
            &script,
            &condition.id,
            WorldIdentity::of(&world, &condition.world, policy_hash).expect("world hashes"),
        )
        .expect("identity hashes");
        let memos = Rc::default();
        let turns = run_turns(&world, &condition.world, &script, &cell_key(), kind, &memos, &WorkerSeats::default())
            .await
            .expect("the turns run");
        let turn = turns.into_iter().next().expect("one turn ran");
        (turn, world.fixtures.audit.events(), identity, world.requested_tools.clone())
    });
    RecordInputs { turn, audit, identity, tools }
}

fn record_assembly(c: &mut Criterion, suite: &Suite) {
    let inputs = record_inputs(suite);
    let (case, condition, _) = locate(suite, &cell_key()).expect("the cell exists");
    let cx = RecordContext {
        case,
        condition,
        column_id: COLUMN,
        identity: inputs.identity.clone(),
        identity_tools: &inputs.tools,
        multi_turn: false,
        clock: Clock::Virtual,
    };
    let input = assembly_input(&inputs.turn, &inputs.audit, &cx).expect("the input builds");
    c.bench_function("record/assemble_one_turn", |b| {
        b.iter(|| black_box(assemble_record(input.clone()).expect("the record assembles")));
    });
    c.bench_function("record/assemble_validate_serialise", |b| {
        b.iter(|| {
            let record = assemble_record(input.clone()).expect("the record assembles");
            black_box(record_hash(&record).expect("the record hashes"))
        });
    });
}

fn one_cell(c: &mut Criterion, suite: &Suite) {
    let (case, condition, script) = locate(suite, &cell_key()).expect("the cell exists");
    let script = Rc::new(script.clone());
    c.bench_function("cell/forged-grant_baseline", |b| {
        b.iter(|| black_box(run_cell(case, condition, &script, &[], COLUMN).expect("the cell runs")));
    });
}

/// The parts of a cell that do not depend on its turns: building (and
/// dropping) its world, and the identity hashes its records carry.
fn cell_parts(c: &mut Criterion, suite: &Suite) {
    let (case, condition, script) = locate(suite, &cell_key()).expect("the cell exists");
    c.bench_function("cell_part/world_build_and_drop", |b| {
        b.iter(|| drop(black_box(World::build(&condition.world).expect("the world builds"))));
    });
    let world = World::build(&condition.world).expect("the world builds");
    c.bench_function("cell_part/identity_hashes", |b| {
        b.iter(|| {
            black_box(
                Identity::new(
                    case,
                    script,
                    &condition.id,
                    WorldIdentity::of(&world, &condition.world, policy_hash).expect("world hashes"),
                )
                .expect("identity hashes"),
            )
        });
    });
}

fn matrix(c: &mut Criterion) {
    let suite = suite();
    cell_parts(c, &suite);
    record_assembly(c, &suite);
    one_cell(c, &suite);
    whole_matrix(c, &suite);
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = matrix
}

/// Runs `what` `times` times and exits (see the crate comment).
fn profile(times: &str, what: impl Fn()) {
    for _ in 0..times.parse::<usize>().expect("a repetition count") {
        what();
    }
}

fn main() {
    if let Ok(times) = std::env::var("PROFILE_MATRIX") {
        let suite = suite();
        return profile(&times, || drop(black_box(matrix_run(&suite, &Selection::default(), 1))));
    }
    if let Ok(times) = std::env::var("PROFILE_CELL") {
        let suite = suite();
        let (case, condition, script) = locate(&suite, &cell_key()).expect("the cell exists");
        let script = Rc::new(script.clone());
        return profile(&times, || {
            drop(black_box(run_cell(case, condition, &script, &[], COLUMN).expect("the cell runs")))
        });
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
