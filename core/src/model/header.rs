//! The safetensors header parser: the 8-byte little-endian header length, the JSON header, and every check that
//! keeps a reader inside the file.
//!
//! Written here rather than taken from the `safetensors` crate because every message must name the tensor at fault
//! (the crate's `TensorInvalidInfo`, `MetadataIncompleteBuffer` and serde's unknown-variant errors do not), and a
//! duplicated tensor name must be an error (the crate keeps the last silently). The rules are the crate's: at most
//! 100 MB of header, known dtypes only, byte sizes that match the offsets, and a data section that the tensors
//! cover exactly, without overlaps or holes. The crate is the oracle of the fuzz harness (`core/tests/safetensors_fuzz.rs`):
//! it must accept exactly what this parser accepts, save the duplicate names.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// The largest header accepted, as the `safetensors` crate limits it.
pub const MAX_HEADER_BYTES: u64 = 100_000_000;

/// Every dtype safetensors defines, with its width in bits.
pub const DTYPES: &[(&str, u64)] = &[
    ("BOOL", 8),
    ("F4", 4),
    ("F6_E2M3", 6),
    ("F6_E3M2", 6),
    ("U8", 8),
    ("I8", 8),
    ("F8_E5M2", 8),
    ("F8_E4M3", 8),
    ("F8_E8M0", 8),
    ("F8_E4M3FNUZ", 8),
    ("F8_E5M2FNUZ", 8),
    ("I16", 16),
    ("U16", 16),
    ("F16", 16),
    ("BF16", 16),
    ("I32", 32),
    ("U32", 32),
    ("F32", 32),
    ("C64", 64),
    ("F64", 64),
    ("I64", 64),
    ("U64", 64),
];

/// One tensor of a header; `begin..end` is relative to the start of the data section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub dtype: &'static str,
    pub shape: Vec<u64>,
    pub begin: u64,
    pub end: u64,
}

/// A checked header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Where the data section starts in the file: 8 plus the header length.
    pub data_start: u64,
    /// Bytes of the data section.
    pub data_len: u64,
    /// The tensors in file order: by where their data starts (ties keep the header's order).
    pub tensors: Vec<Entry>,
    /// The `__metadata__` string pairs, in header order.
    pub metadata: Vec<(String, String)>,
}

/// A name as messages show it: in backticks, control characters escaped.
pub fn shown(name: &str) -> String {
    format!("`{}`", name.escape_debug())
}

/// The JSON object's entries in header order (serde_json's map would lose the order and the duplicates).
struct Entries(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object of tensors")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    // `__metadata__` is a string map to the crate (a repeated key keeps the last); tensors are not.
                    let v = if k == "__metadata__" {
                        map.next_value::<Value>()?
                    } else {
                        map.next_value::<EntryValue>()?.0
                    };
                    out.push((k, v));
                }
                Ok(Entries(out))
            }
        }
        deserializer.deserialize_map(Each)
    }
}

/// An entry's value as serde_json reads it, except that an object naming `dtype`, `shape` or `data_offsets` twice is
/// an error: the crate's derived `TensorInfo` refuses such a duplicate (serde_json's map would keep the last).
struct EntryValue(Value);

impl<'de> serde::Deserialize<'de> for EntryValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = EntryValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<EntryValue, E> {
                Ok(EntryValue(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<EntryValue, E> {
                Ok(EntryValue(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<EntryValue, E> {
                Ok(EntryValue(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<EntryValue, E> {
                Ok(EntryValue(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<EntryValue, E> {
                Ok(EntryValue(Value::String(v.to_string())))
            }
            fn visit_unit<E>(self) -> Result<EntryValue, E> {
                Ok(EntryValue(Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<EntryValue, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    out.push(v);
                }
                Ok(EntryValue(Value::Array(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EntryValue, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    if ["dtype", "shape", "data_offsets"].contains(&k.as_str()) && out.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!("a tensor names `{k}` twice")));
                    }
                    out.insert(k, v);
                }
                Ok(EntryValue(Value::Object(out)))
            }
        }
        deserializer.deserialize_any(Any)
    }
}

/// Parses and checks the header of the safetensors file whose bytes are `file`. The error says what is wrong and
/// names the tensor where there is one; the caller adds the file's path.
pub fn parse(file: &[u8]) -> Result<Header, String> {
    let file_len = file.len() as u64;
    if file.is_empty() {
        return Err("the file is empty (a safetensors file starts with an 8-byte header length)".into());
    }
    let Some(prefix) = file.get(..8) else {
        return Err(format!("the file has {file_len} bytes, fewer than the 8-byte header length"));
    };
    let n = u64::from_le_bytes(prefix.try_into().expect("8 bytes"));
    if n > MAX_HEADER_BYTES {
        return Err(format!("the header length {n} is over the {MAX_HEADER_BYTES}-byte limit"));
    }
    if n > file_len - 8 {
        return Err(format!("the header length {n} runs past the end of the file ({file_len} bytes)"));
    }
    let data_start = 8 + n;
    let data_len = file_len - data_start;
    let json = &file[8..data_start as usize];
    let text = std::str::from_utf8(json).map_err(|e| format!("the header is not UTF-8: {e}"))?;
    let Entries(entries) =
        serde_json::from_str(text).map_err(|e| format!("the header is not a JSON object of tensors: {e}"))?;
    let mut tensors: Vec<Entry> = Vec::with_capacity(entries.len());
    let mut metadata = Vec::new();
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    if let Some((name, _)) = entries.iter().find(|(name, _)| !seen.insert(name.as_str())) {
        return Err(format!("the header names {} twice", shown(name)));
    }
    for (name, value) in entries {
        if name == "__metadata__" {
            metadata = parse_metadata(value)?;
            continue;
        }
        let entry = parse_entry(&name, &value).map_err(|e| format!("tensor {}: {e}", shown(&name)))?;
        if entry.end > data_len {
            return Err(format!(
                "tensor {}: data_offsets [{}, {}] run past the end of the data ({data_len} bytes)",
                shown(&name),
                entry.begin,
                entry.end
            ));
        }
        tensors.push(entry);
    }
    tensors.sort_by_key(|t| (t.begin, t.end));
    let mut covered = 0u64;
    for (i, t) in tensors.iter().enumerate() {
        if t.begin < covered {
            let other = tensors[..i].iter().rev().find(|o| o.end > t.begin).expect("an earlier tensor covers it");
            return Err(format!(
                "tensor {} (bytes {}..{}) overlaps tensor {} (bytes {}..{})",
                shown(&t.name),
                t.begin,
                t.end,
                shown(&other.name),
                other.begin,
                other.end
            ));
        }
        if t.begin > covered {
            return Err(format!(
                "bytes {covered}..{} of the data belong to no tensor (a hole before tensor {})",
                t.begin,
                shown(&t.name)
            ));
        }
        covered = t.end;
    }
    if covered != data_len {
        return Err(format!(
            "the data has {data_len} bytes but the tensors cover {covered}: bytes {covered}..{data_len} belong to no tensor"
        ));
    }
    Ok(Header { data_start, data_len, tensors, metadata })
}

fn parse_metadata(value: Value) -> Result<Vec<(String, String)>, String> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let Value::Object(map) = value else {
        return Err("`__metadata__` must be an object of strings".into());
    };
    map.into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            other => Err(format!("`__metadata__` entry {} must be a string, got {other}", shown(&k))),
        })
        .collect()
}

fn parse_entry(name: &str, value: &Value) -> Result<Entry, String> {
    let Value::Object(fields) = value else {
        return Err(format!("must be an object with dtype, shape and data_offsets, got {}", brief(value)));
    };
    let dtype = match fields.get("dtype") {
        None => return Err("has no `dtype`".into()),
        Some(Value::String(s)) => s.as_str(),
        Some(other) => return Err(format!("`dtype` must be a string, got {}", brief(other))),
    };
    let Some(&(dtype, bits)) = DTYPES.iter().find(|(d, _)| *d == dtype) else {
        let known = DTYPES.iter().map(|(d, _)| *d).collect::<Vec<_>>().join(", ");
        return Err(format!("dtype {} is not a safetensors dtype (known: {known})", shown(dtype)));
    };
    let shape = match fields.get("shape") {
        None => return Err("has no `shape`".into()),
        Some(v) => integers(v).ok_or_else(|| format!("`shape` must be a list of whole numbers, got {}", brief(v)))?,
    };
    let offsets = match fields.get("data_offsets") {
        None => return Err("has no `data_offsets`".into()),
        Some(v) => integers(v)
            .filter(|o| o.len() == 2)
            .ok_or_else(|| format!("`data_offsets` must be two whole numbers [begin, end], got {}", brief(v)))?,
    };
    let (begin, end) = (offsets[0], offsets[1]);
    if end < begin {
        return Err(format!("data_offsets [{begin}, {end}] end before they begin"));
    }
    let shown_shape = format!("{shape:?}");
    let bits = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .and_then(|elements| elements.checked_mul(bits))
        .ok_or_else(|| format!("shape {shown_shape} of {dtype} has more bits than fit in 64"))?;
    if bits % 8 != 0 {
        return Err(format!("shape {shown_shape} of {dtype} is {bits} bits, not a whole number of bytes"));
    }
    if bits / 8 != end - begin {
        return Err(format!(
            "shape {shown_shape} of {dtype} is {} bytes, but data_offsets [{begin}, {end}] hold {}",
            bits / 8,
            end - begin
        ));
    }
    Ok(Entry { name: name.to_string(), dtype, shape, begin, end })
}

fn integers(v: &Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(Value::as_u64).collect()
}

/// A JSON value in a message, cut short.
fn brief(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// What the fuzz targets run on arbitrary bytes: the parse must not panic, and an accepted header must describe
/// tensors that lie inside `data`, tile it exactly and match their shapes. Returns whether it was accepted.
pub fn fuzz_one(data: &[u8]) -> bool {
    match parse(data) {
        Err(message) => {
            assert!(!message.is_empty(), "a rejection without a message");
            false
        }
        Ok(header) => {
            assert_eq!(header.data_start + header.data_len, data.len() as u64);
            let mut covered = 0;
            for t in &header.tensors {
                assert_eq!(t.begin, covered, "tensor {} does not start where the previous ended", t.name);
                assert!(t.end <= header.data_len);
                let bits = DTYPES.iter().find(|(d, _)| *d == t.dtype).unwrap().1;
                assert_eq!(t.shape.iter().product::<u64>() * bits, (t.end - t.begin) * 8);
                let _ = &data[(header.data_start + t.begin) as usize..(header.data_start + t.end) as usize];
                covered = t.end;
            }
            assert_eq!(covered, header.data_len);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: usize) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.resize(out.len() + data, 7);
        out
    }

    #[test]
    fn parses_in_file_order_with_metadata() {
        let f = file(
            r#"{"b":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},"__metadata__":{"format":"pt"},
                "a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"z":{"dtype":"I8","shape":[0],"data_offsets":[12,12]}}  "#,
            12,
        );
        let h = parse(&f).unwrap();
        let names: Vec<_> = h.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "z"]);
        assert_eq!(h.metadata, [("format".to_string(), "pt".to_string())]);
        assert_eq!(h.data_len, 12);
    }

    #[test]
    fn rejects_with_the_tensor_named() {
        let cases: &[(&str, usize, &str)] = &[
            (r#"{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}"#, 4, "tensor `a`: dtype `F33`"),
            (r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#, 4, "shape [2] of F32 is 8 bytes"),
            (r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#, 8, "bytes 4..8 belong to no tensor"),
            (r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#, 8, "a hole before tensor `a`"),
            (r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#, 2, "run past the end of the data"),
            (
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#,
                8,
                "tensor `b` (bytes 4..8) overlaps tensor `a` (bytes 0..8)",
            ),
            (r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#, 1, "12 bits, not a whole number"),
            (r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":1}"#, 1, "names `a` twice"),
            (r#"{"a":{"dtype":"U8","shape":[9],"shape":[1],"data_offsets":[0,1]}}"#, 1, "names `shape` twice"),
            (r#"{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}"#, 1, "tensor `a`: `shape` must be"),
            (r#"[1,2]"#, 0, "not a JSON object"),
        ];
        for (header, data, fragment) in cases {
            let err = parse(&file(header, *data)).unwrap_err();
            assert!(err.contains(fragment), "{header}: {err:?} lacks {fragment:?}");
        }
        assert!(parse(&[]).unwrap_err().contains("empty"));
        assert!(parse(&[1, 0, 0]).unwrap_err().contains("fewer than the 8-byte"));
        assert!(parse(&u64::MAX.to_le_bytes()).unwrap_err().contains("over the 100000000-byte limit"));
        assert!(parse(&1000u64.to_le_bytes()).unwrap_err().contains("runs past the end of the file (8 bytes)"));
    }
}
