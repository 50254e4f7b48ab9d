//! The safetensors format: an 8-byte little-endian header length, a JSON header naming each
//! tensor's dtype, shape and `data_offsets` (and an optional `__metadata__` of strings), then
//! the tensors' bytes, little-endian and row-major, one after another. Checked as the
//! `safetensors` package checks it: the tensors cover the data exactly, without overlaps or
//! gaps, and the file ends where the last one does.

use serde_json::Value;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::shape::fmt_shape;
use crate::weights::{TensorSpec, byte_len};

/// The largest header tandem reads (the `safetensors` package's own bound): a length past it
/// is a corrupt or hostile file, not a header to allocate.
pub const MAX_HEADER: u64 = 100_000_000;

/// A parsed header: the tensors in file order and the metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub tensors: Vec<TensorSpec>,
    pub metadata: Vec<(String, String)>,
}

/// The safetensors names of tandem's dtypes.
const NAMES: [(&str, DType); 8] = [
    ("F16", DType::Float16),
    ("BF16", DType::BFloat16),
    ("F32", DType::Float32),
    ("I32", DType::Int32),
    ("U32", DType::Uint32),
    ("I8", DType::Int8),
    ("U8", DType::Uint8),
    ("BOOL", DType::Bool),
];

fn dtype_of(name: &str) -> Option<DType> {
    NAMES.iter().find(|(n, _)| *n == name).map(|&(_, d)| d)
}

fn name_of(dtype: DType) -> &'static str {
    NAMES
        .iter()
        .find(|&&(_, d)| d == dtype)
        .map(|&(n, _)| n)
        .expect("every dtype has a safetensors name")
}

fn malformed(why: String) -> Error {
    Error::Value(format!("load: a malformed safetensors file: {why}"))
}

/// The header's length from the file's first 8 bytes.
pub fn header_len(prefix: [u8; 8]) -> Result<u64> {
    let len = u64::from_le_bytes(prefix);
    if len > MAX_HEADER {
        return Err(malformed(format!(
            "bytes 0 to 8 give a header of {len} bytes, past the {MAX_HEADER} a header may have"
        )));
    }
    Ok(len)
}

/// Parses the header (the bytes from offset 8) and checks its tensors' layout. With the file's
/// size (`total`), also checks that the file ends where the last tensor does.
pub fn parse_header(json: &[u8], total: Option<u64>) -> Result<Header> {
    let value: Value = serde_json::from_slice(json).map_err(|e| {
        let at = 8 + byte_offset(json, e.line(), e.column());
        malformed(format!(
            "the JSON header is invalid at byte offset {at}: {e}"
        ))
    })?;
    let Value::Object(entries) = value else {
        return Err(malformed("the header is not a JSON object".into()));
    };
    let mut metadata = Vec::new();
    let mut tensors = Vec::new();
    for (name, entry) in entries {
        if name == "__metadata__" {
            metadata = metadata_of(entry)?;
        } else {
            tensors.push(tensor_of(name, &entry)?);
        }
    }
    tensors.sort_by_key(|t| (t.begin, t.end));
    check_layout(&tensors, 8 + json.len() as u64, total)?;
    Ok(Header { tensors, metadata })
}

/// The byte offset of serde_json's 1-based line and column in `text`.
fn byte_offset(text: &[u8], line: usize, column: usize) -> usize {
    let start: usize = text
        .split(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (start + column.saturating_sub(1)).min(text.len())
}

fn metadata_of(entry: Value) -> Result<Vec<(String, String)>> {
    let Value::Object(map) = entry else {
        return Err(malformed("__metadata__ is not an object of strings".into()));
    };
    map.into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            other => Err(malformed(format!(
                "__metadata__ \"{k}\" is {other}, and metadata values must be strings"
            ))),
        })
        .collect()
}

fn tensor_of(name: String, entry: &Value) -> Result<TensorSpec> {
    let field = |key: &str| {
        entry
            .get(key)
            .ok_or_else(|| malformed(format!("tensor \"{name}\" has no \"{key}\"")))
    };
    let dtype_name = field("dtype")?.as_str().ok_or_else(|| {
        malformed(format!(
            "tensor \"{name}\" has a dtype that is not a string"
        ))
    })?;
    let dtype = dtype_of(dtype_name).ok_or_else(|| {
        Error::DType(format!(
            "load: tensor \"{name}\" has dtype {dtype_name}, which tandem does not have; it reads \
             F16, BF16, F32, I32, U32, I8, U8 and BOOL"
        ))
    })?;
    let integers = |key: &str| -> Result<Vec<u64>> {
        let list = field(key)?.as_array().ok_or_else(|| {
            malformed(format!(
                "tensor \"{name}\": \"{key}\" is not a list of integers"
            ))
        })?;
        list.iter()
            .map(|v| {
                v.as_u64().ok_or_else(|| {
                    malformed(format!(
                        "tensor \"{name}\": \"{key}\" holds {v}, not a non-negative integer"
                    ))
                })
            })
            .collect()
    };
    let shape = integers("shape")?;
    let offsets = integers("data_offsets")?;
    let [begin, end] = offsets[..] else {
        return Err(malformed(format!(
            "tensor \"{name}\": \"data_offsets\" must be [begin, end], got {offsets:?}"
        )));
    };
    let shape: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| {
            malformed(format!(
                "tensor \"{name}\" has an extent past this machine's"
            ))
        })?;
    let spec = TensorSpec {
        name,
        dtype,
        shape,
        begin,
        end,
        big_endian: false,
        fortran: false,
    };
    check_size(&spec)?;
    Ok(spec)
}

/// The tensor's offsets hold exactly its elements.
fn check_size(t: &TensorSpec) -> Result<()> {
    let needed = byte_len(t.dtype, &t.shape);
    let held = t.end.checked_sub(t.begin);
    if needed.is_some() && needed == held {
        return Ok(());
    }
    let needed = needed.map_or("more bytes than a u64 counts".into(), |n| {
        format!("{n} bytes")
    });
    Err(malformed(format!(
        "tensor \"{}\" of shape {} and dtype {} needs {needed}, but its data_offsets [{}, {}] \
         hold {}",
        t.name,
        fmt_shape(&t.shape),
        name_of(t.dtype),
        t.begin,
        t.end,
        held.map_or("none (the end is before the begin)".into(), |h| format!(
            "{h} bytes"
        ))
    )))
}

/// The tensors (sorted by offset) cover the data from 0 without overlaps or gaps, and the file
/// of `total` bytes (where known) ends where the last tensor does.
fn check_layout(tensors: &[TensorSpec], data_start: u64, total: Option<u64>) -> Result<()> {
    let mut at = 0u64;
    let mut previous: Option<&TensorSpec> = None;
    for t in tensors {
        if t.begin != at {
            let before = previous.map_or("the start of the data".into(), |p| {
                format!(
                    "tensor \"{}\" (data bytes {} to {})",
                    p.name, p.begin, p.end
                )
            });
            let problem = if t.begin < at {
                "overlaps"
            } else {
                "leaves a gap after"
            };
            return Err(malformed(format!(
                "tensor \"{}\" (data bytes {} to {}) {problem} {before}",
                t.name, t.begin, t.end
            )));
        }
        at = t.end;
        previous = Some(t);
    }
    let Some(total) = total else {
        return Ok(());
    };
    let end = data_start.saturating_add(at);
    if end > total {
        let last = previous.map_or(String::new(), |p| format!(" (tensor \"{}\")", p.name));
        return Err(malformed(format!(
            "the data ends at byte offset {end}{last}, past the end of the file at {total} bytes"
        )));
    }
    if end < total {
        return Err(malformed(format!(
            "{} bytes follow the last tensor's data, which ends at byte offset {end}",
            total - end
        )));
    }
    Ok(())
}

/// One tensor to write: its name, dtype, shape and bytes (little-endian, row-major; `bool`
/// one byte an element).
pub struct Entry<'a> {
    pub name: &'a str,
    pub dtype: DType,
    pub shape: &'a [usize],
    pub bytes: Vec<u8>,
}

impl<'a> Entry<'a> {
    /// The entry of `array` under `name`, from its storage `words` read row-major.
    pub fn of(name: &'a str, array: &'a crate::array::Array, words: &[u32]) -> Entry<'a> {
        Entry {
            name,
            dtype: array.dtype(),
            shape: array.shape(),
            bytes: crate::weights::file_bytes(words, array.dtype(), array.size()),
        }
    }
}

/// The file of `entries` (in their order) and `metadata`, its header padded with spaces to a
/// multiple of 8 bytes as the `safetensors` package pads it. The header lists the metadata
/// and then the tensors in data order, spelled out here rather than by a JSON map, whose key
/// order would follow serde_json's features: the same arrays always give the same bytes.
pub fn write(entries: &[Entry], metadata: &[(String, String)]) -> Result<Vec<u8>> {
    let quoted = |text: &str| serde_json::to_string(text).expect("a string serializes");
    let mut parts = Vec::with_capacity(entries.len() + 1);
    if !metadata.is_empty() {
        let fields: Vec<String> = metadata
            .iter()
            .map(|(k, v)| format!("{}:{}", quoted(k), quoted(v)))
            .collect();
        parts.push(format!("\"__metadata__\":{{{}}}", fields.join(",")));
    }
    let mut names = std::collections::HashSet::new();
    let mut at = 0usize;
    for e in entries {
        if e.name == "__metadata__" || !names.insert(e.name) {
            return Err(Error::Value(format!(
                "saveSafetensors: the name \"{}\" is reserved or used twice",
                e.name
            )));
        }
        let end = at + e.bytes.len();
        let shape: Vec<String> = e.shape.iter().map(usize::to_string).collect();
        parts.push(format!(
            "{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{at},{end}]}}",
            quoted(e.name),
            name_of(e.dtype),
            shape.join(",")
        ));
        at = end;
    }
    let mut json = format!("{{{}}}", parts.join(",")).into_bytes();
    json.resize(json.len().next_multiple_of(8), b' ');
    let mut file = Vec::with_capacity(8 + json.len() + at);
    file.extend((json.len() as u64).to_le_bytes());
    file.extend(json);
    for e in entries {
        file.extend(&e.bytes);
    }
    Ok(file)
}
