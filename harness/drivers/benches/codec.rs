//! Codec translation: what one tool call costs each vendor's codec, from a
//! frame to a step (`interpret`) and from a result back to a frame
//! (`encode_tool_result`). Target: under 1 µs per call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde_json::{json, Map, Value};
use sharedos_drivers::frame::HarnessStep;
use sharedos_drivers::vendor::{Vendor, VendorWire};
use sharedos_model::tool::{ToolOutcome, ToolResult};

fn arguments() -> Map<String, Value> {
    match json!({"path": ["Workspace", "policy.md"]}) {
        Value::Object(map) => map,
        _ => unreachable!("a literal object"),
    }
}

fn result() -> ToolResult {
    ToolResult {
        call_id: "call-1".into(),
        tool: "files.read".into(),
        completed_at: "2026-08-18T09:00:00.000Z".into(),
        metadata: None,
        outcome: ToolOutcome::Succeeded { output: json!({"content": "Policy text."}) },
    }
}

fn bench_codecs(c: &mut Criterion) {
    let mut group = c.benchmark_group("codec");
    for vendor in Vendor::ALL {
        let protocol = vendor.protocol();
        let frame = vendor.writer().tool_call("call-1", "files.read", &arguments());
        let steps = protocol.interpret(&frame);
        assert!(matches!(steps.as_slice(), [HarnessStep::ToolCall { .. }]), "{}: {steps:?}", vendor.id());
        group.bench_function(format!("{}/interpret_call", vendor.id()), |b| {
            b.iter(|| protocol.interpret(black_box(&frame)));
        });
        let answered = result();
        group.bench_function(format!("{}/encode_result", vendor.id()), |b| {
            b.iter(|| protocol.encode_tool_result(black_box(&answered)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_codecs);
criterion_main!(benches);
