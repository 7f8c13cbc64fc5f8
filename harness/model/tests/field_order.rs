//! The record's and the grant's types declare their fields in canonical
//! key order.
//!
//! Canonical JSON (RFC 8785) sorts every object's members. The canonical
//! writer takes a struct's fields in declaration order and rewrites an
//! object only when they arrive out of order, so declaring them sorted
//! keeps hashing a record (done for every turn) free of that rewrite. The
//! bytes are canonical either way: this guards the cost, not the output.
#![allow(clippy::unwrap_used)]

use serde::de::{self, Deserialize, Deserializer, Visitor};
use sharedos_model::capability::{Capability, Constraints, Grant, Requirement, ResourceRef};
use sharedos_model::execution::{Escalation, ExecutionEvent, RuntimeManifest};
use sharedos_model::record::{
    AuditRef, AuthorityRecord, AuthoritySnapshot, CostRecord, Decision, DiffRef, ExecutionRecord, ExecutionSection,
    ExperimentIdentity, Operation, StateRecord, StateReference, SystemIdentity,
};
use std::fmt;

/// The serialised field names of `T`, in declaration order: serde hands
/// them to `deserialize_struct`, where this deserializer stops.
fn declared_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    #[derive(Debug)]
    struct Fields(&'static [&'static str]);
    impl fmt::Display for Fields {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{:?}", self.0)
        }
    }
    impl std::error::Error for Fields {}
    impl de::Error for Fields {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Fields(&[])
        }
    }
    struct Introspect;
    impl<'de> Deserializer<'de> for Introspect {
        type Error = Fields;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Fields> {
            Err(Fields(&[]))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Fields> {
            Err(Fields(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    match T::deserialize(Introspect) {
        Err(Fields(fields)) => fields,
        Ok(_) => &[],
    }
}

fn assert_sorted<'de, T: Deserialize<'de>>() {
    let name = std::any::type_name::<T>();
    let fields = declared_fields::<T>();
    assert!(!fields.is_empty(), "{name}: no fields seen");
    let mut sorted = fields.to_vec();
    // Every key is ASCII, so byte order is UTF-16 order.
    sorted.sort_unstable();
    assert_eq!(fields, sorted.as_slice(), "{name} declares its fields out of canonical order");
}

// `EscalationAsked` keeps its order: the manifest prints it as declared.
#[test]
fn record_types_declare_fields_in_canonical_order() {
    assert_sorted::<ExecutionRecord>();
    assert_sorted::<ExperimentIdentity>();
    assert_sorted::<SystemIdentity>();
    assert_sorted::<RuntimeManifest>();
    assert_sorted::<AuthorityRecord>();
    assert_sorted::<AuthoritySnapshot>();
    assert_sorted::<ExecutionSection>();
    assert_sorted::<Escalation>();
    assert_sorted::<Decision>();
    assert_sorted::<Operation>();
    assert_sorted::<ResourceRef>();
    assert_sorted::<ExecutionEvent>();
    assert_sorted::<AuditRef>();
    assert_sorted::<StateRecord>();
    assert_sorted::<StateReference>();
    assert_sorted::<DiffRef>();
    assert_sorted::<CostRecord>();
}

/// Grants are written canonically for every world's hash.
#[test]
fn grant_types_declare_fields_in_canonical_order() {
    assert_sorted::<Grant>();
    assert_sorted::<Capability>();
    assert_sorted::<Constraints>();
    assert_sorted::<Requirement>();
}

#[test]
fn the_introspection_sees_declaration_order() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct OutOfOrder {
        b: u8,
        a: u8,
    }
    assert_eq!(declared_fields::<OutOfOrder>(), ["b", "a"]);
}
