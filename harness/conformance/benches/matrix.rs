//! Cost of the whole adversary matrix (plan, run on one worker, report) and
//! of assembling one turn's execution record from an already executed turn.

use criterion::{criterion_group, criterion_main, Criterion};
use sharedos_conformance::loader::{load_suite, Suite};
use sharedos_conformance::record::assemble::{assemble_record, AssemblyInput, CostInput, SystemInput};
use sharedos_conformance::run::cell::{run_cell, REFERENCE_VERSION};
use sharedos_conformance::run::hashes::{evaluator_hash, policy_hash, spec_hash, world_hash};
use sharedos_conformance::run::matrix::{plan, run_all, Selection};
use sharedos_conformance::run::report::build_report;
use sharedos_conformance::run::turns::{run_adversary_turns, ExecutedTurn};
use sharedos_conformance::world::World;
use sharedos_model::audit::AuditEvent;
use sharedos_model::message::PROTOCOL_VERSION;
use sharedos_model::record::ExperimentIdentity;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

const CASE: &str = "forged-grant";
const CONDITION: &str = "baseline";
const COLUMN: &str = "adversary-embedded";

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn suite() -> Suite {
    load_suite(&repository_root()).expect("the suite loads")
}

fn whole_matrix(c: &mut Criterion, suite: &Suite) {
    let selection = Selection::default();
    let mut group = c.benchmark_group("matrix");
    group.sample_size(10);
    group.bench_function("adversary_matrix", |b| {
        b.iter(|| {
            let planned = plan(suite, &selection);
            let results = run_all(suite, &planned, 1);
            black_box(build_report(suite, &selection, results).expect("the report builds"))
        });
    });
    group.finish();
}

/// Everything one turn's record is assembled from, captured after running
/// the cell's turns once.
struct RecordInputs {
    turn: ExecutedTurn,
    audit: Vec<AuditEvent>,
    experiment: ExperimentIdentity,
    policy: String,
}

fn record_inputs(suite: &Suite) -> RecordInputs {
    let case = suite.case(CASE).expect("the case exists");
    let condition = case.conditions.iter().find(|c| c.id == CONDITION).expect("the condition exists");
    let script = Rc::new(suite.script_for(case).expect("the script exists").clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("the runtime starts");
    runtime.block_on(async {
        let world = World::build(&condition.world).expect("the world builds");
        let description = world.description(&condition.world);
        let turns = run_adversary_turns(&world, &condition.world, &script, (CASE, CONDITION, COLUMN))
            .await
            .expect("the turns run");
        let turn = turns.into_iter().next().expect("one turn ran");
        let policy =
            policy_hash(&turn.request.context.enabled_tool_namespaces, &turn.request.tools).expect("policy hash");
        RecordInputs {
            experiment: ExperimentIdentity {
                experiment_id: "sharedos-conformance".to_string(),
                task_id: case.id.clone(),
                run_id: format!("{CONDITION}.{COLUMN}"),
                spec_hash: spec_hash(case, &script, CONDITION).expect("spec hash"),
                world_hash: world_hash(&description).expect("world hash"),
                evaluator_hash: evaluator_hash().expect("evaluator hash"),
                seed: None,
                metadata: None,
            },
            audit: world.fixtures.audit.events(),
            turn,
            policy,
        }
    })
}

fn record_assembly(c: &mut Criterion, suite: &Suite) {
    let inputs = record_inputs(suite);
    c.bench_function("record/assemble_one_turn", |b| {
        b.iter(|| {
            black_box(
                assemble_record(AssemblyInput {
                    request: &inputs.turn.request,
                    result: &inputs.turn.result,
                    audit: &inputs.audit,
                    experiment: inputs.experiment.clone(),
                    system: SystemInput {
                        protocol_version: PROTOCOL_VERSION.to_string(),
                        shared_os_version: REFERENCE_VERSION.to_string(),
                        adapter_id: COLUMN.to_string(),
                        policy_hash: inputs.policy.clone(),
                        ..SystemInput::default()
                    },
                    runtime: None,
                    state: None,
                    cost: CostInput::default(),
                    audit_ref: None,
                    recorded_at: None,
                })
                .expect("the record assembles"),
            )
        });
    });
}

fn one_cell(c: &mut Criterion, suite: &Suite) {
    let case = suite.case(CASE).expect("the case exists");
    let condition = case.conditions.iter().find(|c| c.id == CONDITION).expect("the condition exists");
    let script = Rc::new(suite.script_for(case).expect("the script exists").clone());
    c.bench_function("cell/forged-grant_baseline", |b| {
        b.iter(|| black_box(run_cell(case, condition, &script, COLUMN).expect("the cell runs")));
    });
}

fn matrix(c: &mut Criterion) {
    let suite = suite();
    whole_matrix(c, &suite);
    record_assembly(c, &suite);
    one_cell(c, &suite);
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = matrix
}
criterion_main!(benches);
