//! Byte-for-byte agreement with `serde_json_canonicalizer`.
#![allow(clippy::unwrap_used)]

use crate::canonical::canonical_bytes;
use proptest::prelude::*;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The reference's answer: bytes, or its error text.
fn reference<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    serde_json_canonicalizer::to_vec(value).map_err(|e| e.to_string())
}

fn same_as_reference<T: Serialize>(value: &T) {
    let ours = canonical_bytes(value).map_err(|e| e.0);
    let theirs = reference(value).map_err(|e| format!("serialise a value as canonical JSON: {e}"));
    assert_eq!(ours, theirs);
}

#[test]
fn fast_path_handles_plain_values_itself() {
    let value = json!({"b": [1, -2, "x\u{1}\"\\\n"], "a": {"d": null, "c": true}, "é": 9_007_199_254_740_992_u64});
    assert_eq!(super::write(&value).unwrap().into_bytes(), reference(&value).unwrap());
}

#[test]
fn keys_sort_by_utf16_code_units() {
    // U+1F600 sorts before U+FF61 in UTF-16 (surrogates) but after it in UTF-8.
    let value = json!({"\u{ff61}": 1, "\u{1f600}": 2, "a\"": 3, "a": 4, "\u{7f}": 5, "\u{e000}": 6});
    assert_eq!(super::write(&value).unwrap().into_bytes(), reference(&value).unwrap());
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Unsorted<'a> {
    zeta: u8,
    alpha: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    middle: Vec<Shape>,
    map: BTreeMap<String, i64>,
    numbers: BTreeMap<u32, bool>,
    bytes: &'a [u8],
    pair: (char, i128),
}

#[derive(Serialize)]
enum Shape {
    Unit,
    Newtype(u16),
    Tuple(i8, String),
    Struct { b: u32, a: () },
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tagged {
    Only { value: i32, extra: String },
}

#[test]
fn typed_values_match_the_reference() {
    let value = Unsorted {
        zeta: 7,
        alpha: Some("a"),
        skipped: None,
        middle: vec![Shape::Unit, Shape::Newtype(3), Shape::Tuple(-1, "t".into()), Shape::Struct { b: 2, a: () }],
        map: BTreeMap::from([("y".to_string(), -5), ("x".to_string(), i64::MIN)]),
        numbers: BTreeMap::from([(2, true), (10, false)]),
        bytes: &[0, 255],
        pair: ('\u{0}', i128::MAX),
    };
    same_as_reference(&value);
    same_as_reference(&Tagged::Only { value: -3, extra: "e".into() });
    let map = BTreeMap::from([("y".to_string(), -5), ("b".to_string(), 9)]);
    let fast = Unsorted { numbers: BTreeMap::new(), pair: ('x', -7), map, ..value };
    assert_eq!(super::write(&fast).unwrap().into_bytes(), reference(&fast).unwrap(), "taken without the reference");
    same_as_reference(&vec![Some(1.5_f64), None, Some(f64::NAN)]);
    same_as_reference(&json!({"a": 1, "b": [2.0, 1e21, -0.0]}));
    same_as_reference(&[u64::MAX, 1 << 53, (1 << 53) + 1]);
}

#[test]
fn nested_unsorted_objects_stream_like_their_bytes() {
    #[derive(Serialize)]
    struct Inner {
        z: Vec<Inner>,
        a: u8,
    }
    let leaf = |a| Inner { z: Vec::new(), a };
    let value = vec![Inner { z: vec![leaf(1), Inner { z: vec![leaf(2)], a: 3 }], a: 4 }, leaf(5)];
    let canonical = super::write(&value).unwrap();
    let mut streamed = Vec::new();
    canonical.emit(&mut |chunk| streamed.extend_from_slice(chunk));
    assert_eq!(streamed, reference(&value).unwrap());
    assert_eq!(canonical.into_bytes(), reference(&value).unwrap());
    let hash = crate::canonical::tagged_hash("tag", &value).unwrap();
    assert_eq!(hash, crate::canonical::tagged_hash_of_bytes("tag", &reference(&value).unwrap()));
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1_000_000_i64..1_000_000).prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-c\u{0}-\u{1f}\"\\\\\u{e000}\u{1f600}]{0,6}".prop_map(Value::String),
        LONG_STRING.prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-c\u{7f}\u{e000}\u{ff61}\u{1f600}\"\\\\\n]{0,4}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// Long runs of plain text with now and then a byte to escape, so the
/// word-at-a-time scan meets them at every offset of a word.
const LONG_STRING: &str = "[a-z0-9\u{7f}\u{80}\u{ff}\u{e000}\u{1f600}]{0,24}[\u{0}-\u{1f}\"\\\\]?[a-z\u{80}]{0,24}";

proptest! {
    #[test]
    fn the_word_scan_finds_the_first_byte_to_escape(text in LONG_STRING) {
        let expected = text.bytes().position(|b| b < 0x20 || b == b'"' || b == b'\\');
        prop_assert_eq!(super::first_escape(text.as_bytes()), expected);
    }

    #[test]
    fn any_json_value_matches_the_reference(value in value()) {
        same_as_reference(&value);
    }

    #[test]
    fn sorted_compact_json_is_serde_jsons_text_whenever_it_answers(value in value()) {
        if let Some(bytes) = crate::canonical::sorted_compact_json(&value) {
            prop_assert_eq!(bytes, serde_json::to_vec(&value).unwrap());
        }
    }

    #[test]
    fn sorted_pretty_json_is_serde_jsons_pretty_text_whenever_it_answers(value in value()) {
        if let Some(bytes) = crate::canonical::sorted_pretty_json(&value) {
            prop_assert_eq!(String::from_utf8(bytes).unwrap(), serde_json::to_string_pretty(&value).unwrap());
        }
    }
}

#[test]
fn sorted_pretty_json_indents_reordered_members_and_keeps_empty_containers() {
    #[derive(serde::Serialize)]
    struct Unsorted {
        b: Vec<u32>,
        a: std::collections::BTreeMap<String, u32>,
        c: Vec<u32>,
    }
    let value = Unsorted { b: vec![1, 2], a: std::collections::BTreeMap::new(), c: vec![] };
    let text = String::from_utf8(crate::canonical::sorted_pretty_json(&value).unwrap()).unwrap();
    assert_eq!(text, "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": []\n}");
    assert_eq!(text, serde_json::to_string_pretty(&serde_json::to_value(&value).unwrap()).unwrap());
}

#[test]
fn sorted_compact_json_declines_keys_whose_orders_differ() {
    let value = json!({"\u{ff61}": 1, "\u{1f600}": 2});
    assert_eq!(crate::canonical::sorted_compact_json(&value), None);
    assert_eq!(
        crate::canonical::sorted_compact_json(&json!({"b": [1, {"d": null, "c": "x"}], "a": true})).unwrap(),
        br#"{"a":true,"b":[1,{"c":"x","d":null}]}"#.to_vec()
    );
}
