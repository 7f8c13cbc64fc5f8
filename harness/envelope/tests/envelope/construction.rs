//! Construction and request schema: E1–E4.

use crate::support;

use serde_json::json;
use sharedos_envelope::error::{ConstructionError, ExecuteError};
use sharedos_envelope::executor::Executor;
use sharedos_envelope::options::ExecuteOptions;
use sharedos_envelope::runtime::complete;
use sharedos_model::execution::ExecutionOptions;
use std::rc::Rc;
use support::*;

fn build(options: sharedos_envelope::options::ExecutorOptions) -> Result<Executor, ConstructionError> {
    let p = plugin(|_r, _h, _s| async move { Ok(complete(json!(null))) });
    Executor::new(FakeKernel::with_tools(vec![]), p, options)
}

#[tokio::test(start_paused = true)]
async fn e1_a_manifest_failing_the_schema_is_refused_at_construction() {
    for bad in [
        sharedos_model::execution::RuntimeManifest { id: String::new(), ..manifest() },
        sharedos_model::execution::RuntimeManifest { version: " padded".into(), ..manifest() },
        sharedos_model::execution::RuntimeManifest { protocol_version: "2".into(), ..manifest() },
    ] {
        let p = plugin(|_r, _h, _s| async move { Ok(complete(json!(null))) });
        let mut inner = Rc::try_unwrap(p).ok().unwrap();
        inner.manifest = bad;
        let error = Executor::new(FakeKernel::with_tools(vec![]), Rc::new(inner), options()).unwrap_err();
        assert!(matches!(error, ConstructionError::InvalidManifest(_)));
    }
    // A plugin without a callable `run` cannot be written: the trait requires it.
    let executor = build(options()).unwrap();
    assert_eq!(executor.runtime_manifest(), &manifest());
}

#[tokio::test(start_paused = true)]
async fn e2_numeric_options_out_of_range_are_refused() {
    let cases = [
        ("defaultMaxSteps", sharedos_envelope::options::ExecutorOptions { default_max_steps: 0, ..options() }),
        (
            "defaultMaxToolCalls",
            sharedos_envelope::options::ExecutorOptions { default_max_tool_calls: Some(0), ..options() },
        ),
        (
            "defaultMaxToolCalls",
            sharedos_envelope::options::ExecutorOptions { default_max_tool_calls: Some(10_001), ..options() },
        ),
        ("defaultTimeoutMs", sharedos_envelope::options::ExecutorOptions { default_timeout_ms: 0, ..options() }),
        ("defaultTimeoutMs", sharedos_envelope::options::ExecutorOptions { default_timeout_ms: 600_001, ..options() }),
        ("drainGraceMs", sharedos_envelope::options::ExecutorOptions { drain_grace_ms: 600_001, ..options() }),
    ];
    for (name, opts) in cases {
        match build(opts) {
            Err(ConstructionError::InvalidOption { option, .. }) => assert_eq!(option, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    // Edges that are accepted; no upper bound on defaultMaxSteps.
    assert!(build(sharedos_envelope::options::ExecutorOptions {
        drain_grace_ms: 600_000,
        default_max_steps: 5_000,
        default_max_tool_calls: Some(10_000),
        default_timeout_ms: 600_000,
        ..options()
    })
    .is_ok());
    assert!(build(sharedos_envelope::options::ExecutorOptions {
        drain_grace_ms: 0,
        default_timeout_ms: 1,
        ..options()
    })
    .is_ok());
}

#[tokio::test(start_paused = true)]
async fn e3_a_request_failing_the_schema_rejects_with_no_result_and_no_audit() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = plugin(|_r, _h, _s| async move { Ok(complete(json!(null))) });
    let exec = executor(&kernel, &p, options());
    let mut bad = request(vec![]);
    bad.execution_id = String::new();
    let error = exec.execute(bad, ExecuteOptions::default()).await.unwrap_err();
    assert!(matches!(error, ExecuteError::InvalidRequest(_)));
    assert!(kernel.ops.borrow().is_empty(), "no kernel call, not even turn_end");
    assert_eq!(p.runs.get(), 0);
    // Unknown keys are a schema failure too (strict parse).
    let mut value = serde_json::to_value(request(vec![])).unwrap();
    value["intent"] = json!("x");
    assert!(serde_json::from_value::<sharedos_model::execution::ExecutionRequest>(value).is_err());
}

#[tokio::test(start_paused = true)]
async fn e4_request_limits_above_their_caps_are_schema_failures() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = plugin(|_r, _h, _s| async move { Ok(complete(json!(null))) });
    let exec = executor(&kernel, &p, options());
    for opts in [
        ExecutionOptions { max_steps: Some(1001), ..ExecutionOptions::default() },
        ExecutionOptions { max_tool_calls: Some(10_001), ..ExecutionOptions::default() },
        ExecutionOptions { timeout_ms: Some(600_001), ..ExecutionOptions::default() },
        ExecutionOptions { timeout_ms: Some(0), ..ExecutionOptions::default() },
    ] {
        let mut req = request(vec![]);
        req.options = Some(opts);
        assert!(exec.execute(req, ExecuteOptions::default()).await.is_err());
    }
    assert!(kernel.ops.borrow().is_empty());
}
