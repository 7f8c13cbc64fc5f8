//! Map keys: only string-like keys take the fast path; every other shape is
//! left to the reference serialiser, which decides how (or whether) it is
//! written.

use super::{escape_into, unsupported, Unsupported, Writer};
use serde::ser::{self, Serialize};

/// Writes a map key's escaped text; only string-like keys take the fast path.
pub(super) struct KeyWriter<'a> {
    pub(super) writer: &'a mut Writer,
}

impl KeyWriter<'_> {
    /// Writes the key; answers whether it is plain ASCII.
    fn text(self, text: &str) -> Result<bool, Unsupported> {
        Ok(escape_into(&mut self.writer.out, text) && text.is_ascii())
    }
}

/// Every key shape but strings is left to the reference serialiser.
fn key_unsupported() -> Result<bool, Unsupported> {
    Err(unsupported("a map key that is not a string"))
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = bool;
    type Error = Unsupported;
    type SerializeSeq = ser::Impossible<bool, Unsupported>;
    type SerializeTuple = ser::Impossible<bool, Unsupported>;
    type SerializeTupleStruct = ser::Impossible<bool, Unsupported>;
    type SerializeTupleVariant = ser::Impossible<bool, Unsupported>;
    type SerializeMap = ser::Impossible<bool, Unsupported>;
    type SerializeStruct = ser::Impossible<bool, Unsupported>;
    type SerializeStructVariant = ser::Impossible<bool, Unsupported>;

    fn serialize_str(self, v: &str) -> Result<bool, Unsupported> {
        self.text(v)
    }

    fn serialize_char(self, v: char) -> Result<bool, Unsupported> {
        self.text(v.encode_utf8(&mut [0_u8; 4]))
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<bool, Unsupported> {
        self.text(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<bool, Unsupported> {
        value.serialize(self)
    }

    fn serialize_bool(self, _v: bool) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_i8(self, _v: i8) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_i16(self, _v: i16) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_i32(self, _v: i32) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_i64(self, _v: i64) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_u8(self, _v: u8) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_u16(self, _v: u16) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_u32(self, _v: u32) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_u64(self, _v: u64) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_f32(self, _v: f32) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_f64(self, _v: f64) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_none(self) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_unit(self) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<bool, Unsupported> {
        key_unsupported()
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(unsupported("a map key that is not a string"))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(unsupported("a map key that is not a string"))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(unsupported("a map key that is not a string"))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(unsupported("a map key that is not a string"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        Err(unsupported("a map key that is not a string"))
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, Unsupported> {
        Err(unsupported("a map key that is not a string"))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(unsupported("a map key that is not a string"))
    }
}
