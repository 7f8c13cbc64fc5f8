#![allow(clippy::unwrap_used)]
use sharedos_conformance::loader::load_suite;
use sharedos_conformance::run::cell::Identity;
use sharedos_conformance::run::hashes::WorldDescription;
use sharedos_conformance::world::World;
use sharedos_model::canonical::canonical_bytes;
use std::path::Path;
#[test]
fn probe() {
    let suite = load_suite(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")).unwrap();
    let case = suite.case("forged-grant").unwrap();
    let condition = &case.conditions[0];
    let script = suite.script_for(case).unwrap();
    let world = World::build(&condition.world).unwrap();
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(Identity::new(case, script, condition, &world).unwrap());
    }
    eprintln!("identity {:?}", t.elapsed() / 1000);
    let tools = canonical_bytes(&world.requested_tools).unwrap();
    let d = WorldDescription::of(&world, &condition.world).canonical_with_tools(&tools).unwrap();
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(WorldDescription::of(&world, &condition.world).canonical_with_tools(&tools).unwrap());
    }
    eprintln!("description {} bytes {:?}", d.len(), t.elapsed() / 1000);
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(sharedos_model::canonical::tagged_hash_of_bytes("x", &d));
    }
    eprintln!("sha of description {:?}", t.elapsed() / 1000);
}
#[test]
fn probe2() {
    let suite = load_suite(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")).unwrap();
    let case = suite.case("forged-grant").unwrap();
    let condition = &case.conditions[0];
    let world = World::build(&condition.world).unwrap();
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(sharedos_kernel::listing::catalog_hash(&world.requested_tools).unwrap());
    }
    eprintln!("catalog hash of {} tools {:?}", world.requested_tools.len(), t.elapsed() / 1000);
    let grants: Vec<_> = world.fixtures.grants.agent.clone();
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(sharedos_authz::authority::snapshot(&grants, "2026-01-01T00:00:00.000Z"));
    }
    eprintln!(
        "snapshot of {} grants {:?} ({} bytes)",
        grants.len(),
        t.elapsed() / 1000,
        canonical_bytes(&grants).unwrap().len()
    );
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(canonical_bytes(&grants).unwrap());
    }
    eprintln!("canonical grants {:?}", t.elapsed() / 1000);
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(serde_json::to_vec(&grants).unwrap());
    }
    eprintln!("serde_json grants {:?}", t.elapsed() / 1000);
    let t = std::time::Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(grants.clone() == grants);
    }
    eprintln!("clone+eq grants {:?}", t.elapsed() / 1000);
}
#[test]
fn probe3() {
    let world = World::build(&sharedos_conformance::world_options::WorldOptions::default()).unwrap();
    let grants: Vec<_> = world.fixtures.grants.agent.clone();
    for _ in 0..20000 {
        std::hint::black_box(canonical_bytes(&grants).unwrap());
    }
}
