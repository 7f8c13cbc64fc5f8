//! A streaming RFC 8785 (JCS) writer: serialises any `Serialize` value
//! straight into one buffer of canonical bytes, without building a
//! `serde_json::Value`. An object whose members arrive out of key order (a
//! struct's fields, usually) is rewritten in place as it closes.
//!
//! Its output is the same, byte for byte, as `serde_json_canonicalizer`'s
//! for every value it accepts: members sorted by the UTF-16 code units of
//! their keys, strings escaped as `serde_json` escapes them, every number
//! written as ECMAScript writes the double it denotes. Anything unusual (a
//! float, an integer beyond 2^53, a non-string map key, a raw JSON fragment,
//! a duplicate key) is answered with [`Unsupported`], and the caller falls
//! back to the reference serialiser so the bytes, or the error, stay the
//! reference's own.

mod key;

use key::KeyWriter;
use serde::ser::{self, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// Largest integer magnitude a double holds exactly; within it a decimal
/// integer is exactly what ECMAScript prints for the double.
const MAX_EXACT: u64 = 1 << 53;

/// Struct names serde_json reserves for raw fragments and arbitrary numbers.
const RESERVED_STRUCTS: [&str; 2] = ["$serde_json::private::RawValue", "$serde_json::private::Number"];

/// Why the fast path declined a value (the caller retries with the reference).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(String);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Unsupported(msg.to_string())
    }
}

fn unsupported(what: &str) -> Unsupported {
    Unsupported(what.to_string())
}

/// The writer's first buffer size.
const INITIAL_CAPACITY: usize = 8 * 1024;

/// The canonical form of `value`, or [`Unsupported`].
pub(crate) fn write<T: Serialize + ?Sized>(value: &T) -> Result<Canonical, Unsupported> {
    write_laid_out(value, false)
}

/// The canonical form of `value` laid out as `serde_json`'s pretty printer
/// lays out the same text: each member and element on its own line, two
/// spaces per level, `": "` after a key, `{}` and `[]` when empty. Enum
/// variants written as objects are [`Unsupported`] here.
pub(crate) fn write_indented<T: Serialize + ?Sized>(value: &T) -> Result<Canonical, Unsupported> {
    write_laid_out(value, true)
}

fn write_laid_out<T: Serialize + ?Sized>(value: &T, indented: bool) -> Result<Canonical, Unsupported> {
    let mut writer = Writer {
        // Most values written here are records and snapshots of a few KB;
        // starting at that size spares them the copies of growing from small.
        out: Vec::with_capacity(INITIAL_CAPACITY),
        members: Vec::new(),
        order: Vec::new(),
        scratch: Vec::new(),
        plain_keys: true,
        indented,
        depth: 0,
    };
    value.serialize(&mut writer)?;
    Ok(Canonical { out: writer.out, plain_keys: writer.plain_keys })
}

/// A value's canonical bytes.
pub(crate) struct Canonical {
    out: Vec<u8>,
    /// Every object key was plain ASCII, needing no escape.
    plain_keys: bool,
}

impl Canonical {
    /// Hands the canonical bytes to `sink`.
    pub(crate) fn emit(&self, sink: &mut impl FnMut(&[u8])) {
        sink(&self.out);
    }

    /// The canonical bytes.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.out
    }

    /// Whether every object key was plain ASCII (so UTF-16 order, which
    /// these bytes follow, is also byte order).
    pub(crate) fn plain_keys(&self) -> bool {
        self.plain_keys
    }
}

/// One object member already written to `out`: `"key":value` spans
/// `start..end`, and the key's escaped text `key_start..key_end`.
#[derive(Debug, Clone, Copy)]
struct Member {
    start: usize,
    key_start: usize,
    key_end: usize,
    end: usize,
    /// The key is ASCII and needed no escape, so its bytes order it.
    plain: bool,
    /// The first eight bytes of a plain key, big-endian and zero-padded:
    /// ordering these orders most keys without reading them again (a plain
    /// key holds no zero byte, so the padding sorts a prefix first).
    prefix: u64,
}

/// The output and the bookkeeping shared by every nesting level.
struct Writer {
    out: Vec<u8>,
    /// Members of the objects being written, innermost last.
    members: Vec<Member>,
    /// Scratch: the key order of the object being closed.
    order: Vec<usize>,
    /// Scratch: the members of the object being put in key order.
    scratch: Vec<u8>,
    /// No key so far needed an escape or held a non-ASCII character.
    plain_keys: bool,
    /// Lay members and elements out on indented lines.
    indented: bool,
    /// How many objects and arrays are open.
    depth: usize,
}

impl Writer {
    fn integer(&mut self, negative: bool, magnitude: u128) -> Result<(), Unsupported> {
        if magnitude > u128::from(MAX_EXACT) {
            return Err(unsupported("an integer beyond 2^53"));
        }
        if negative && magnitude != 0 {
            self.out.push(b'-');
        }
        write_decimal(&mut self.out, magnitude);
        Ok(())
    }

    fn open_object(&mut self) -> Object<'_> {
        self.out.push(b'{');
        self.depth += 1;
        let base = self.members.len();
        Object { start: self.out.len(), base, writer: self, variant: false }
    }

    /// Opens `{"variant":` for the enum encodings serde_json wraps in an object.
    fn open_variant(&mut self, variant: &str) -> Result<(), Unsupported> {
        if self.indented {
            return Err(unsupported("an enum variant written as an object, indented"));
        }
        self.out.extend_from_slice(b"{\"");
        escape_into(&mut self.out, variant);
        self.out.extend_from_slice(b"\":");
        Ok(())
    }

    /// When indenting, starts a new line at the current depth.
    fn new_line(&mut self) {
        if self.indented {
            self.out.push(b'\n');
            self.out.resize(self.out.len() + 2 * self.depth, b' ');
        }
    }

    /// Closes the innermost object or array with `close`; `empty` when it
    /// has no member or element (it then stays `{}` or `[]`).
    fn close_level(&mut self, empty: bool, close: &[u8]) {
        self.depth = self.depth.saturating_sub(1);
        if !empty {
            self.new_line();
        }
        self.out.extend_from_slice(close);
    }

    /// Writes the members of the object starting at `start` in key order.
    fn close_object(&mut self, start: usize, base: usize) -> Result<(), Unsupported> {
        let members = &self.members[base..];
        let mut sorted = true;
        for pair in members.windows(2) {
            match member_cmp(&self.out, &pair[0], &pair[1]) {
                Ordering::Less => {}
                Ordering::Equal => return Err(unsupported("a duplicate object key")),
                Ordering::Greater => sorted = false,
            }
        }
        if !sorted {
            self.reorder(start, base)?;
        }
        self.members.truncate(base);
        let empty = self.out.len() == start;
        self.close_level(empty, b"}");
        Ok(())
    }

    /// Rewrites the members of the object starting at `start` in key order.
    ///
    /// Nested objects closed first, so every member is final here; the
    /// object is copied once per enclosing object that needs reordering,
    /// which keeps the output one contiguous buffer.
    fn reorder(&mut self, start: usize, base: usize) -> Result<(), Unsupported> {
        let Writer { out, members, order, scratch, .. } = self;
        let members = &members[base..];
        order.clear();
        order.extend(0..members.len());
        order.sort_unstable_by(|&a, &b| member_cmp(out, &members[a], &members[b]));
        if order.windows(2).any(|w| member_cmp(out, &members[w[0]], &members[w[1]]) == Ordering::Equal) {
            return Err(unsupported("a duplicate object key"));
        }
        scratch.clear();
        scratch.extend_from_slice(&out[start..]);
        out.truncate(start);
        for (i, &m) in order.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&scratch[members[m].start - start..members[m].end - start]);
        }
        Ok(())
    }
}

/// Decimal digits of `n`.
fn write_decimal(out: &mut Vec<u8>, mut n: u128) {
    let mut digits = [0_u8; 40];
    let mut at = digits.len();
    loop {
        at -= 1;
        // `n % 10` is below ten, so the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (n % 10) as u8;
        digits[at] = b'0' + digit;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// The bytes a JSON string escapes: quote, backslash and control characters.
const NEEDS_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The index of the first byte at or after `from` that must be escaped.
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    first_escape(&bytes[from..]).map(|i| from + i)
}

/// The index of the first byte of `bytes` that must be escaped. Almost
/// every string needs none, so it tests eight bytes at a time: a word
/// holds such a byte exactly when one of its bytes is below 0x20 or
/// equal to a quote or a backslash (the classic "has a byte less than n"
/// and "has a zero byte" word tests, which never miss and, as used here,
/// never report a byte that is not there).
fn first_escape(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let zero_byte = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        // A chunk of `chunks_exact(8)` always converts; a zero word would
        // only send it to the exact scan below.
        let word = <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes);
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
        let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
        let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
        if control | quote | backslash != 0 {
            if let Some(i) = chunk.iter().position(|&b| NEEDS_ESCAPE[usize::from(b)]) {
                return Some(offset + i);
            }
        }
        offset += 8;
    }
    chunks.remainder().iter().position(|&b| NEEDS_ESCAPE[usize::from(b)]).map(|i| offset + i)
}

/// Appends `text` escaped as serde_json escapes string contents (quote,
/// backslash, and control characters; the short forms where JSON has them).
/// Answers whether nothing needed escaping.
fn escape_into(out: &mut Vec<u8>, text: &str) -> bool {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    let Some(first) = first_escape(bytes) else {
        out.extend_from_slice(bytes);
        return true;
    };
    let mut plain = 0;
    let mut next = Some(first);
    while let Some(i) = next {
        out.extend_from_slice(&bytes[plain..i]);
        plain = i + 1;
        let byte = bytes[i];
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => b"",
        };
        if short.is_empty() {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
        } else {
            out.extend_from_slice(short);
        }
        next = next_escape(bytes, plain);
    }
    out.extend_from_slice(&bytes[plain..]);
    plain == 0
}

/// Orders two members by the UTF-16 code units of their keys, which sit
/// in `bytes`.
#[inline]
fn member_cmp(bytes: &[u8], a: &Member, b: &Member) -> Ordering {
    let key = |m: &Member| &bytes[m.key_start..m.key_end];
    if a.plain && b.plain {
        return a.prefix.cmp(&b.prefix).then_with(|| key(a).cmp(key(b)));
    }
    unescape(key(a)).encode_utf16().cmp(unescape(key(b)).encode_utf16())
}

/// The first eight bytes of `key`, big-endian, zero-padded.
#[inline]
fn key_prefix(key: &[u8]) -> u64 {
    let mut bytes = [0_u8; 8];
    let len = key.len().min(8);
    bytes[..len].copy_from_slice(&key[..len]);
    u64::from_be_bytes(bytes)
}

/// The text of an escaped key (written by [`escape_into`], so always valid).
fn unescape(escaped: &[u8]) -> String {
    let mut quoted = Vec::with_capacity(escaped.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(escaped);
    quoted.push(b'"');
    serde_json::from_slice::<String>(&quoted).unwrap_or_default()
}

/// An object being written; members are sorted when it closes.
struct Object<'a> {
    writer: &'a mut Writer,
    /// Offset just after the opening brace.
    start: usize,
    /// Index of this object's first member in `Writer::members`.
    base: usize,
    /// Also close the `{"variant":` wrapper of a struct variant.
    variant: bool,
}

impl Object<'_> {
    /// Writes `"key":` for a member; answers its start and key span.
    fn begin_member(
        &mut self,
        write_key: impl FnOnce(&mut Writer) -> Result<bool, Unsupported>,
    ) -> Result<Member, Unsupported> {
        let writer = &mut *self.writer;
        if writer.out.len() > self.start {
            writer.out.push(b',');
        }
        // A member's span starts before its line break, so reordering
        // members moves each with its own line.
        let start = writer.out.len();
        writer.new_line();
        writer.out.push(b'"');
        let key_start = writer.out.len();
        let plain = write_key(writer)?;
        let key_end = writer.out.len();
        let prefix = if plain { key_prefix(&writer.out[key_start..key_end]) } else { 0 };
        writer.plain_keys &= plain;
        writer.out.extend_from_slice(if writer.indented { b"\": " } else { b"\":" });
        Ok(Member { start, key_start, key_end, end: key_end, plain, prefix })
    }

    fn member<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Unsupported> {
        let mut member = self.begin_member(|w| Ok(escape_into(&mut w.out, key) && key.is_ascii()))?;
        value.serialize(&mut *self.writer)?;
        member.end = self.writer.out.len();
        self.writer.members.push(member);
        Ok(())
    }

    fn finish(self) -> Result<(), Unsupported> {
        self.writer.close_object(self.start, self.base)?;
        if self.variant {
            self.writer.out.push(b'}');
        }
        Ok(())
    }
}

/// The member whose key was written and whose value is awaited (maps).
struct MapObject<'a> {
    object: Object<'a>,
    pending: Option<Member>,
}

/// A sequence being written; `close` is what ends it (`]` or `]}`).
struct Sequence<'a> {
    writer: &'a mut Writer,
    first: bool,
    close: &'static [u8],
}

impl Sequence<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        if !self.first {
            self.writer.out.push(b',');
        }
        self.first = false;
        self.writer.new_line();
        value.serialize(&mut *self.writer)
    }

    fn finish(self) {
        self.writer.close_level(self.first, self.close);
    }
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Sequence<'a>;
    type SerializeTuple = Sequence<'a>;
    type SerializeTupleStruct = Sequence<'a>;
    type SerializeTupleVariant = Sequence<'a>;
    type SerializeMap = MapObject<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Unsupported> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Unsupported> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i16(self, v: i16) -> Result<(), Unsupported> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i32(self, v: i32) -> Result<(), Unsupported> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i64(self, v: i64) -> Result<(), Unsupported> {
        self.integer(v < 0, u128::from(v.unsigned_abs()))
    }

    fn serialize_i128(self, v: i128) -> Result<(), Unsupported> {
        self.integer(v < 0, v.unsigned_abs())
    }

    fn serialize_u8(self, v: u8) -> Result<(), Unsupported> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u16(self, v: u16) -> Result<(), Unsupported> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u32(self, v: u32) -> Result<(), Unsupported> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u64(self, v: u64) -> Result<(), Unsupported> {
        self.integer(false, u128::from(v))
    }

    fn serialize_u128(self, v: u128) -> Result<(), Unsupported> {
        self.integer(false, v)
    }

    fn serialize_f32(self, _v: f32) -> Result<(), Unsupported> {
        Err(unsupported("a floating-point number"))
    }

    fn serialize_f64(self, _v: f64) -> Result<(), Unsupported> {
        Err(unsupported("a floating-point number"))
    }

    fn serialize_char(self, v: char) -> Result<(), Unsupported> {
        self.serialize_str(v.encode_utf8(&mut [0_u8; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<(), Unsupported> {
        self.out.push(b'"');
        escape_into(&mut self.out, v);
        self.out.push(b'"');
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Unsupported> {
        let mut sequence = Sequence { writer: self, first: true, close: b"]" };
        sequence.writer.out.push(b'[');
        for byte in v {
            sequence.element(byte)?;
        }
        sequence.finish();
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Unsupported> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Unsupported> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Unsupported> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Unsupported> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unsupported> {
        self.open_variant(variant)?;
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Sequence<'a>, Unsupported> {
        self.out.push(b'[');
        self.depth += 1;
        Ok(Sequence { writer: self, first: true, close: b"]" })
    }

    fn serialize_tuple(self, len: usize) -> Result<Sequence<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Sequence<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Sequence<'a>, Unsupported> {
        self.open_variant(variant)?;
        self.out.push(b'[');
        self.depth += 1;
        Ok(Sequence { writer: self, first: true, close: b"]}" })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<MapObject<'a>, Unsupported> {
        Ok(MapObject { object: self.open_object(), pending: None })
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Object<'a>, Unsupported> {
        if RESERVED_STRUCTS.contains(&name) {
            return Err(unsupported("a raw JSON fragment"));
        }
        Ok(self.open_object())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, Unsupported> {
        self.open_variant(variant)?;
        let mut object = self.open_object();
        object.variant = true;
        Ok(object)
    }
}

impl ser::SerializeSeq for Sequence<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }

    fn end(self) -> Result<(), Unsupported> {
        self.finish();
        Ok(())
    }
}

impl ser::SerializeTuple for Sequence<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }

    fn end(self) -> Result<(), Unsupported> {
        self.finish();
        Ok(())
    }
}

impl ser::SerializeTupleStruct for Sequence<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }

    fn end(self) -> Result<(), Unsupported> {
        self.finish();
        Ok(())
    }
}

impl ser::SerializeTupleVariant for Sequence<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.element(value)
    }

    fn end(self) -> Result<(), Unsupported> {
        self.finish();
        Ok(())
    }
}

impl ser::SerializeStruct for Object<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
        self.member(key, value)
    }

    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Object<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
        self.member(key, value)
    }

    fn end(self) -> Result<(), Unsupported> {
        self.finish()
    }
}

impl ser::SerializeMap for MapObject<'_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unsupported> {
        if self.pending.is_some() {
            return Err(unsupported("a map key without a value"));
        }
        self.pending = Some(self.object.begin_member(|w| key.serialize(KeyWriter { writer: w }))?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        let Some(mut member) = self.pending.take() else {
            return Err(unsupported("a map value without a key"));
        };
        value.serialize(&mut *self.object.writer)?;
        member.end = self.object.writer.out.len();
        self.object.writer.members.push(member);
        Ok(())
    }

    fn end(self) -> Result<(), Unsupported> {
        if self.pending.is_some() {
            return Err(unsupported("a map key without a value"));
        }
        self.object.finish()
    }
}

#[cfg(test)]
mod tests;
