//! Annotate and result metadata: E85–E94.

use crate::support;

use serde_json::{json, Map, Value};
use sharedos_envelope::error::HostError;
use sharedos_envelope::error::RuntimeFailure;
use sharedos_envelope::host::RuntimeHost;
use sharedos_envelope::runtime::{complete, escalate, fail, with_metadata};
use sharedos_model::execution::{ExecutionResult, ExecutionStatus, RuntimeManifest};
use sharedos_model::tool::ProtocolError;
use sharedos_port::audit::AuditEffect;
use sharedos_testkit::call::call;
use std::future::pending;
use std::rc::Rc;
use support::*;

fn tools() -> Vec<sharedos_model::tool::ToolDefinition> {
    vec![read_tool("files.read"), escalate_tool(), write_tool("payments.transfer")]
}

async fn annotated<F, Fut>(kernel: Rc<FakeKernel>, grace_ms: u64, script: F) -> ExecutionResult
where
    F: Fn(RuntimeHost) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<Value, RuntimeFailure>> + 'static,
{
    let p = plugin(move |_r, host, _s| {
        host.annotate("promptHash", json!("abc")).unwrap();
        script(host)
    });
    run(&executor(&kernel, &p, grace(grace_ms)), request(tools())).await
}

#[tokio::test(start_paused = true)]
async fn e85_runtime_provenance_is_the_manifest_snapshot() {
    let kernel = FakeKernel::with_tools(vec![]);
    let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
    let mut inner = Rc::try_unwrap(p).ok().unwrap();
    let metadata: Map<String, Value> = [("build".to_string(), json!("b1"))].into_iter().collect();
    inner.manifest = RuntimeManifest { metadata: Some(metadata), ..manifest() };
    let p = Rc::new(inner);
    let result = run(&executor(&kernel, &p, options()), request(vec![])).await;
    assert_eq!(
        result.metadata.unwrap()["runtime"],
        json!({"id": "scripted", "version": "0.1.0", "protocolVersion": "1", "metadata": {"build": "b1"}})
    );
    assert_eq!(result.events[0].data["runtime"], json!({"id": "scripted", "version": "0.1.0", "protocolVersion": "1"}));
}

#[tokio::test(start_paused = true)]
async fn e86_e87_reserved_keys_and_non_json_values_are_refused() {
    let result = annotated(FakeKernel::with_tools(tools()), 0, |host| async move {
        for key in ["", "runtime", "__proto__"] {
            assert!(matches!(host.annotate(key, json!(1)), Err(HostError::InvalidAnnotationKey(_))));
        }
        assert!(host.annotate(" ", json!(1)).is_ok());
        assert!(host.annotate("Runtime", json!(1)).is_ok());
        // NaN, infinities, functions, undefined, Date and bigint cannot be a serde_json::Value.
        assert!(serde_json::Number::from_f64(f64::NAN).is_none());
        host.annotate("nested", json!({"__proto__": {"x": 1}, "keep": [1, 2]}))?;
        Ok(complete(Value::Null))
    })
    .await;
    let metadata = result.metadata.unwrap();
    assert_eq!(metadata["nested"], json!({"keep": [1, 2]}));
    assert_eq!(metadata["Runtime"], 1);
    assert_eq!(metadata["runtime"]["id"], "scripted");
}

#[tokio::test(start_paused = true)]
async fn e88_e89_last_write_wins_and_annotations_outrank_outcome_metadata() {
    let result = annotated(FakeKernel::with_tools(tools()), 0, |host| async move {
        host.annotate("k", json!(1))?;
        host.annotate("k", json!(2))?;
        let metadata: Map<String, Value> = [
            ("k".to_string(), json!("outcome")),
            ("runtime".to_string(), json!("forged")),
            ("other".to_string(), json!(true)),
        ]
        .into_iter()
        .collect();
        Ok(with_metadata(complete(Value::Null), metadata))
    })
    .await;
    let metadata = result.metadata.unwrap();
    assert_eq!(metadata["k"], 2);
    assert_eq!(metadata["other"], true);
    assert_eq!(metadata["runtime"]["id"], "scripted");
}

#[tokio::test(start_paused = true)]
async fn e90_annotations_appear_on_every_ending_the_body_builds() {
    let cases: Vec<(&str, Rc<FakeKernel>)> = vec![
        ("succeeded", FakeKernel::with_tools(tools())),
        ("fail", FakeKernel::with_tools(tools())),
        ("escalated", FakeKernel::with_tools(tools())),
        ("cancelled", FakeKernel::with_tools(tools())),
        ("runtime_failed", FakeKernel::with_tools(tools())),
        ("invalid", FakeKernel::with_tools(tools())),
        ("audit", FakeKernel::with_tools(tools())),
    ];
    for (case, kernel) in cases {
        kernel.handle("payments.transfer", Handler::outage(AuditEffect::None));
        let result = annotated(kernel, 0, move |host| async move {
            match case {
                "succeeded" => Ok(complete(Value::Null)),
                "fail" => Ok(fail(ProtocolError::new("model_refused", "no"))),
                "escalated" => Ok(escalate("ask")),
                "cancelled" => pending().await,
                "runtime_failed" => Err(RuntimeFailure::message("boom")),
                "invalid" => Ok(json!({"type": "?"})),
                _ => {
                    let _ = host
                        .invoke_tool(
                            call("c1", "payments.transfer", json!({})),
                            sharedos_envelope::host::ToolInvocationOptions::none(),
                        )
                        .await;
                    Ok(complete(Value::Null))
                }
            }
        })
        .await;
        assert_eq!(result.metadata.unwrap()["promptHash"], "abc", "{case}");
    }
}

#[tokio::test(start_paused = true)]
async fn e91_e93_annotations_while_draining_are_kept_on_a_cancelled_turn() {
    let result = annotated(FakeKernel::with_tools(tools()), 5_000, |host| async move {
        host.draining().aborted().await;
        host.annotate("late", json!("while draining"))?;
        pending().await
    })
    .await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    let metadata = result.metadata.unwrap();
    assert_eq!((metadata["promptHash"].clone(), metadata["late"].clone()), (json!("abc"), json!("while draining")));
}

#[tokio::test(start_paused = true)]
async fn e92_a_valid_annotation_after_close_is_dropped_silently() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, _h, _s| async move { Ok(complete(Value::Null)) });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    let host = p.hosts.borrow()[0].clone();
    assert!(host.annotate("after", json!(1)).is_ok());
    assert!(
        matches!(host.annotate("runtime", json!(1)), Err(HostError::InvalidAnnotationKey(_))),
        "validation still runs"
    );
    assert!(!result.metadata.unwrap().contains_key("after"));
}

#[tokio::test(start_paused = true)]
async fn e94_a_turn_cancelled_before_anything_was_stated_has_no_prompt_hash() {
    let kernel = FakeKernel::with_tools(tools());
    let p = plugin(|_r, _h, _s| async move { pending().await });
    let result = run(&executor(&kernel, &p, options()), request(tools())).await;
    assert_eq!(result.status, ExecutionStatus::Cancelled);
    assert!(!result.metadata.unwrap().contains_key("promptHash"));
}
