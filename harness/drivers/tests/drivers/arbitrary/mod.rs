//! Proptest strategies the codec tests share. Each codec passes its own
//! vocabulary (the keys, frame types or words its streams use), so the
//! arbitrary values reach its branches rather than only its fallbacks.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{Map, Value};
use sharedos_drivers::frame::HarnessFrame;

/// A key from `keys`, or a short lowercase one.
fn key(keys: &'static [&'static str]) -> impl Strategy<Value = String> + Clone {
    prop_oneof![prop::sample::select(keys).prop_map(str::to_string), "[a-z_]{0,8}"]
}

/// A frame type from `types`, as a JSON string.
fn frame_type(types: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::sample::select(types).prop_map(Value::from)
}

/// Arbitrary JSON whose objects use `keys` and whose strings are often `types`.
pub fn json(keys: &'static [&'static str], types: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
        frame_type(types),
    ];
    nested(leaf, key(keys), 4, 48)
}

/// An arbitrary frame whose `type` is one of `types`.
pub fn frame(keys: &'static [&'static str], types: &'static [&'static str]) -> impl Strategy<Value = HarnessFrame> {
    (frame_type(types), prop::collection::btree_map(key(keys), json(keys, types), 0..6)).prop_map(|(kind, fields)| {
        let mut frame: HarnessFrame = fields.into_iter().collect();
        frame.insert("type".into(), kind);
        frame
    })
}

/// Arbitrary tool-call arguments.
pub fn arguments(
    keys: &'static [&'static str],
    types: &'static [&'static str],
) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(".{0,8}", json(keys, types), 0..5).prop_map(|map| map.into_iter().collect())
}

/// Arbitrary JSON whose objects use `keys` and whose strings are often `words`.
pub fn worded_json(keys: &'static [&'static str], words: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        prop::sample::select(words).prop_map(|word| Value::String(word.to_string())),
    ];
    let key = prop_oneof![prop::sample::select(keys).prop_map(str::to_string), "[a-zA-Z]{0,6}"];
    nested(leaf, key, 5, 64)
}

/// Arrays and objects (keys drawn from `key`) nested over `leaf`, up to
/// `depth` levels and about `size` values.
fn nested(
    leaf: impl Strategy<Value = Value> + 'static,
    key: impl Strategy<Value = String> + Clone + 'static,
    depth: u32,
    size: u32,
) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(depth, size, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// One arbitrary argument value; `floats` says whether numbers may be
/// fractional (a codec that carries arguments as text cannot keep every
/// float's exact bits).
pub fn argument_value(floats: bool) -> impl Strategy<Value = Value> {
    let leaf = if floats {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
        ]
        .boxed()
    } else {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
        ]
        .boxed()
    };
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}
