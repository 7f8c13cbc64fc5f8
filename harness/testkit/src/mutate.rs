//! Hostile documents for the readers' fuzz tests: a valid document with one
//! value replaced, one key removed, or its text cut short, and arbitrary
//! JSON. `scripts/fuzz.sh` runs them at 100 000 cases each.

use proptest::prelude::*;
use serde_json::{Map, Value};

/// Arbitrary JSON, its strings often `words` (the vocabulary a reader
/// branches on), its keys often `words` too.
pub fn json(words: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let word = || prop::sample::select(words).prop_map(str::to_string);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,10}".prop_map(Value::String),
        word().prop_map(Value::String),
    ];
    let key = prop_oneof![word(), "[a-zA-Z]{0,6}"];
    leaf.prop_recursive(3, 32, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..5)
                .prop_map(|map| Value::Object(map.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

/// Every JSON pointer inside `value`, the root first.
#[must_use]
pub fn pointers(value: &Value) -> Vec<String> {
    let mut found = vec![String::new()];
    let mut index = 0;
    while index < found.len() {
        let pointer = found[index].clone();
        match value.pointer(&pointer) {
            Some(Value::Object(map)) => {
                found.extend(map.keys().map(|k| format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"))));
            }
            Some(Value::Array(items)) => found.extend((0..items.len()).map(|i| format!("{pointer}/{i}"))),
            _ => {}
        }
        index += 1;
    }
    found
}

/// One way to damage a document.
#[derive(Debug, Clone)]
pub enum Damage {
    /// The value at the `n`th pointer (modulo their count) becomes this.
    Replace(usize, Value),
    /// The `n`th pointer's key or element is removed.
    Remove(usize),
    /// The text is cut after this many bytes (modulo its length).
    Truncate(usize),
    /// These bytes instead of the document.
    Bytes(Vec<u8>),
}

/// A damage to apply, with arbitrary JSON from `words`.
pub fn damage(words: &'static [&'static str]) -> impl Strategy<Value = Damage> {
    prop_oneof![
        4 => (any::<usize>(), json(words)).prop_map(|(at, value)| Damage::Replace(at, value)),
        2 => any::<usize>().prop_map(Damage::Remove),
        1 => any::<usize>().prop_map(Damage::Truncate),
        1 => prop::collection::vec(any::<u8>(), 0..64).prop_map(Damage::Bytes),
    ]
}

/// `text` (a JSON document) damaged as `damage` says.
#[must_use]
pub fn damaged(text: &str, damage: &Damage) -> Vec<u8> {
    let Ok(mut document) = serde_json::from_str::<Value>(text) else { return text.as_bytes().to_vec() };
    let all = pointers(&document);
    match damage {
        Damage::Replace(at, value) => {
            let pointer = &all[at % all.len()];
            if let Some(slot) = document.pointer_mut(pointer) {
                *slot = value.clone();
            }
        }
        Damage::Remove(at) => {
            let pointer = &all[at % all.len()];
            if let Some((parent, key)) = pointer.rsplit_once('/') {
                match document.pointer_mut(parent) {
                    Some(Value::Object(map)) => drop(map.remove(&key.replace("~1", "/").replace("~0", "~"))),
                    Some(Value::Array(items)) => {
                        if let Ok(i) = key.parse::<usize>() {
                            if i < items.len() {
                                items.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Damage::Truncate(at) => return text.as_bytes()[..at % (text.len() + 1)].to_vec(),
        Damage::Bytes(bytes) => return bytes.clone(),
    }
    document.to_string().into_bytes()
}
