//! Virtual time under a process seat: it passes only while the runtime
//! waits, so a deadline never fires because a process took real time.

use crate::support::{fallback, run_turn, standin};
use sharedos_model::execution::ExecutionStatus;
use sharedos_process::message::Clock;
use sharedos_process::seat::ProcessSeat;
use sharedos_process::session::Session;
use std::rc::Rc;

#[test]
fn a_runtime_that_works_in_real_time_does_not_move_the_paused_clock() {
    let seat = Rc::new(ProcessSeat::new(standin("busy_then_complete"), fallback()));
    let turn = run_turn(&seat, 100);
    assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "{:?}", turn.result.error);
    assert_eq!(turn.elapsed_ms, 0, "300 ms of real work took no virtual time");
}

#[test]
fn a_wait_with_an_instant_lands_on_it_and_a_call_is_answered() {
    let seat = Rc::new(ProcessSeat::new(standin("wait_then_call"), fallback()));
    let turn = run_turn(&seat, 60_000);
    assert_eq!(turn.result.status, ExecutionStatus::Succeeded, "{:?}", turn.result.error);
    assert_eq!(turn.result.output, Some(serde_json::json!({"at": "succeeded"})));
    assert_eq!(turn.elapsed_ms, 5000);
}

#[test]
fn the_runtime_manifest_is_the_one_it_said_ready_with() {
    let seat = Rc::new(ProcessSeat::new(standin("complete"), fallback()));
    let turn = run_turn(&seat, 1000);
    assert_eq!(turn.result.status, ExecutionStatus::Succeeded);
    assert_eq!(seat.manifest().id, "standin.complete");
    let again = run_turn(&seat, 1000);
    assert_eq!(again.result.status, ExecutionStatus::Succeeded, "one process serves many turns");
}

#[test]
fn the_runtime_sees_only_the_variables_its_seat_names() {
    let mut launch = standin("environment");
    launch.env.insert("SEAT_ONLY".into(), "1".into());
    std::env::set_var("SHAREDOS_AMBIENT_SECRET", "must not leak");
    let seat = Rc::new(ProcessSeat::new(launch, fallback()));
    let turn = run_turn(&seat, 1000);
    let variables = turn.result.output.unwrap()["variables"].clone();
    let names: Vec<&str> = variables.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(names.contains(&"SEAT_ONLY") && names.contains(&"PATH"), "{names:?}");
    assert!(!names.contains(&"SHAREDOS_AMBIENT_SECRET"), "{names:?}");
    // `python3` may be a launcher that sets variables of its own (pyenv's
    // shim does); none of the harness's own reaches the runtime.
    assert!(!names.contains(&"HOME") && !names.contains(&"CARGO"), "{names:?}");
}

#[test]
fn a_session_shut_down_leaves_no_process_behind() {
    let seat = Rc::new(ProcessSeat::new(standin("complete"), fallback()));
    let turn = run_turn(&seat, 1000);
    assert_eq!(turn.result.status, ExecutionStatus::Succeeded);
    let pid = seat.session().unwrap().pid();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists(), "running while the seat serves turns");
    seat.discard(0);
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "killed and reaped");
}

/// Whether `pid` still runs: not gone, and not a zombie left for a parent
/// that is not ours to reap.
fn runs(pid: u64) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next());
    state.is_some_and(|state| state != "Z" && state != "X")
}

#[test]
fn a_session_shut_down_kills_what_its_runtime_started_too() {
    let seat = Rc::new(ProcessSeat::new(standin("with_a_child"), fallback()));
    let turn = run_turn(&seat, 1000);
    let child = turn.result.output.unwrap_or_else(|| panic!("{:?}", turn.result.error))["child"].as_u64().unwrap();
    assert!(runs(child), "the runtime's own child runs while the seat serves turns");
    seat.discard(0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while runs(child) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!runs(child), "killed with the runtime's process group");
}

#[test]
fn a_turn_on_virtual_time_shares_one_cpu_with_its_runtime_and_then_lets_go() {
    use rustix::thread::sched_getaffinity;
    let allowed = sched_getaffinity(None).unwrap();
    let seat = Rc::new(ProcessSeat::new(standin("affinity"), fallback()));
    let turn = run_turn(&seat, 1000);
    let cpus = turn.result.output.unwrap_or_else(|| panic!("{:?}", turn.result.error))["cpus"].clone();
    let cpus: Vec<usize> = cpus.as_array().unwrap().iter().map(|cpu| cpu.as_u64().unwrap() as usize).collect();
    assert_eq!(cpus.len(), 1, "{cpus:?}");
    assert!(allowed.is_set(cpus[0]), "one of the CPUs the harness may use");
    assert_eq!(sched_getaffinity(None).unwrap(), allowed, "the turn's thread is let go when it ends");
}

#[test]
fn a_runtime_on_real_time_is_left_where_the_system_puts_it() {
    let mut launch = standin("affinity");
    launch.clock = Clock::Real;
    let session = Session::start(&launch).unwrap();
    assert!(session.share_cpu().is_none());
}
