//! NumPy's `.npy` format: `\x93NUMPY`, a version, the header's length (2 bytes in version 1,
//! 4 in versions 2 and 3), a header that is a Python dict literal (`{'descr': '<f4',
//! 'fortran_order': False, 'shape': (2, 3), }`), then one array's bytes. The header is read by
//! a small parser of exactly those literals: strings, `True`/`False` and tuples of integers.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::weights::{TensorSpec, byte_len};

/// The first bytes of every `.npy` file.
pub const MAGIC: &[u8] = b"\x93NUMPY";

/// The largest header tandem reads; NumPy's own limit for reading is 10,000 bytes.
pub const MAX_HEADER: u64 = 1 << 20;

fn malformed(why: String) -> Error {
    Error::Value(format!("load: a malformed .npy file: {why}"))
}

/// Where the header starts and how long it is, from the file's first bytes; `None` while too
/// few have arrived (12 are always enough).
pub fn header_span(prefix: &[u8]) -> Result<Option<(usize, u64)>> {
    if prefix.len() < 10 {
        return Ok(None);
    }
    let (major, minor) = (prefix[6], prefix[7]);
    match major {
        1 => Ok(Some((
            10,
            u64::from(u16::from_le_bytes([prefix[8], prefix[9]])),
        ))),
        2 | 3 if prefix.len() < 12 => Ok(None),
        2 | 3 => {
            let len = u64::from(u32::from_le_bytes([
                prefix[8], prefix[9], prefix[10], prefix[11],
            ]));
            if len > MAX_HEADER {
                return Err(malformed(format!(
                    "bytes 8 to 12 give a header of {len} bytes, past the {MAX_HEADER} a header may have"
                )));
            }
            Ok(Some((12, len)))
        }
        _ => Err(malformed(format!(
            "byte 6 gives format version {major}.{minor}; tandem reads versions 1, 2 and 3"
        ))),
    }
}

/// The array a header describes, its data starting after the header (at `data_start`); with
/// the file's size (`total`), checks that the data fills the rest of the file exactly.
pub fn parse_header(header: &[u8], data_start: u64, total: Option<u64>) -> Result<TensorSpec> {
    let start = data_start - header.len() as u64;
    let text = std::str::from_utf8(header).map_err(|e| {
        malformed(format!(
            "the header is not text at byte offset {}",
            start + e.valid_up_to() as u64
        ))
    })?;
    let entries = Dict::parse(text).map_err(|(at, why)| {
        malformed(format!(
            "the header {why} at byte offset {}",
            start + at as u64
        ))
    })?;
    let field = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .ok_or_else(|| malformed(format!("the header has no '{key}'")))
    };
    let Literal::Str(descr) = field("descr")? else {
        return Err(malformed("the header's 'descr' is not a string".into()));
    };
    let Literal::Bool(fortran) = *field("fortran_order")? else {
        return Err(malformed(
            "the header's 'fortran_order' is not True or False".into(),
        ));
    };
    let Literal::Tuple(shape) = field("shape")? else {
        return Err(malformed(
            "the header's 'shape' is not a tuple of integers".into(),
        ));
    };
    let (dtype, big_endian) = dtype_of(descr)?;
    let spec = TensorSpec {
        name: "the array".into(),
        dtype,
        shape: shape.clone(),
        begin: 0,
        end: byte_len(dtype, shape)
            .ok_or_else(|| malformed("the shape's size overflows".into()))?,
        big_endian,
        fortran,
    };
    if let Some(total) = total {
        check_total(&spec, data_start, total)?;
    }
    Ok(spec)
}

fn check_total(spec: &TensorSpec, data_start: u64, total: u64) -> Result<()> {
    let end = data_start.saturating_add(spec.end);
    if end == total {
        return Ok(());
    }
    let why = if end > total {
        format!("the array's data ends at byte offset {end}, past the end of the file at {total}")
    } else {
        format!(
            "{} bytes follow the array's data, which ends at byte offset {end}",
            total - end
        )
    };
    Err(malformed(why))
}

/// A `descr` as a dtype and whether its bytes are big-endian.
fn dtype_of(descr: &str) -> Result<(DType, bool)> {
    let (order, code) = descr.split_at(descr.len().min(1));
    let dtype = match code {
        "f2" => Some(DType::Float16),
        "f4" => Some(DType::Float32),
        "i4" => Some(DType::Int32),
        "u4" => Some(DType::Uint32),
        "i1" => Some(DType::Int8),
        "u1" => Some(DType::Uint8),
        "b1" => Some(DType::Bool),
        // MLX writes bfloat16 as two raw bytes, NumPy having no bfloat16.
        "V2" => Some(DType::BFloat16),
        _ => None,
    };
    match (order, dtype) {
        ("<" | "|" | "=", Some(d)) => Ok((d, false)),
        (">", Some(d)) if d != DType::BFloat16 => Ok((d, d.size() > 1)),
        _ => Err(Error::DType(format!(
            "load: the .npy array has descr '{descr}', which tandem does not have; it reads \
             '<f2', '<f4', '<i4', '<u4', '|i1', '|u1', '|b1' (and their big-endian forms) and \
             '<V2' (MLX's bfloat16)"
        ))),
    }
}

/// NumPy's `descr` of a dtype; `bfloat16`, which NumPy lacks, as MLX writes it: two raw
/// bytes (`'<V2'`), which `mx.load` and tandem read back as bfloat16.
fn descr_of(dtype: DType) -> &'static str {
    match dtype {
        DType::Float16 => "<f2",
        DType::Float32 => "<f4",
        DType::Int32 => "<i4",
        DType::Uint32 => "<u4",
        DType::Int8 => "|i1",
        DType::Uint8 => "|u1",
        DType::Bool => "|b1",
        DType::BFloat16 => "<V2",
    }
}

/// The `.npy` file (format version 1.0) of one row-major array's little-endian `bytes`, its
/// header padded so that the data starts at a multiple of 64 bytes, as NumPy writes it.
pub fn write(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Vec<u8>> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {tuple}, }}",
        descr_of(dtype)
    )
    .into_bytes();
    let padded = (10 + header.len() + 1).next_multiple_of(64) - 10;
    header.resize(padded - 1, b' ');
    header.push(b'\n');
    let mut file = Vec::with_capacity(10 + header.len() + bytes.len());
    file.extend(MAGIC);
    file.extend([1, 0]);
    file.extend((header.len() as u16).to_le_bytes());
    file.extend(header);
    file.extend(bytes);
    Ok(file)
}

/// A header value.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
}

/// The parser of a header's dict literal; errors carry the byte offset in the header.
struct Dict<'a> {
    text: &'a [u8],
    at: usize,
}

type Parsed<T> = std::result::Result<T, (usize, String)>;

impl Dict<'_> {
    fn parse(text: &str) -> Parsed<Vec<(String, Literal)>> {
        let mut p = Dict {
            text: text.as_bytes(),
            at: 0,
        };
        p.expect(b'{')?;
        let mut entries = Vec::new();
        loop {
            if p.eat(b'}') {
                return Ok(entries);
            }
            let key = p.string()?;
            p.expect(b':')?;
            entries.push((key, p.value()?));
            if !p.eat(b',') {
                p.expect(b'}')?;
                return Ok(entries);
            }
        }
    }

    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.skip_space();
        let found = self.text.get(self.at) == Some(&byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, byte: u8) -> Parsed<()> {
        if self.eat(byte) {
            return Ok(());
        }
        Err((self.at, format!("expects '{}'", byte as char)))
    }

    fn string(&mut self) -> Parsed<String> {
        self.skip_space();
        let quote = match self.text.get(self.at) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return Err((self.at, "expects a quoted string".into())),
        };
        let start = self.at + 1;
        let len = self.text[start..]
            .iter()
            .position(|&b| b == quote)
            .ok_or((self.at, "has a string that never ends".into()))?;
        self.at = start + len + 1;
        String::from_utf8(self.text[start..start + len].to_vec())
            .map_err(|_| (start, "has a string that is not text".into()))
    }

    fn value(&mut self) -> Parsed<Literal> {
        self.skip_space();
        let rest = &self.text[self.at..];
        for (word, value) in [("True", true), ("False", false)] {
            if rest.starts_with(word.as_bytes()) {
                self.at += word.len();
                return Ok(Literal::Bool(value));
            }
        }
        match rest.first() {
            Some(b'(') => self.tuple().map(Literal::Tuple),
            Some(b'\'' | b'"') => self.string().map(Literal::Str),
            _ => Err((self.at, "expects a string, True, False or a tuple".into())),
        }
    }

    fn tuple(&mut self) -> Parsed<Vec<usize>> {
        self.expect(b'(')?;
        let mut items = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(items);
            }
            items.push(self.integer()?);
            if !self.eat(b',') {
                self.expect(b')')?;
                return Ok(items);
            }
        }
    }

    fn integer(&mut self) -> Parsed<usize> {
        self.skip_space();
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap_or("");
        digits
            .parse()
            .map_err(|_| (start, "expects a non-negative integer that fits".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_headers_numpy_writes() {
        let text = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n";
        let spec = parse_header(text.as_bytes(), 10 + text.len() as u64, None).unwrap();
        assert_eq!(
            (spec.dtype, spec.shape.clone(), spec.end),
            (DType::Float32, vec![2, 3], 24)
        );
        let scalar = "{'descr': '|b1', 'fortran_order': True, 'shape': (), }";
        let spec = parse_header(scalar.as_bytes(), 10 + scalar.len() as u64, None).unwrap();
        assert!(spec.fortran && spec.shape.is_empty() && spec.end == 1);
    }

    #[test]
    fn writes_what_it_reads() {
        let file = write(DType::Int8, &[3], &[1, 2, 255]).unwrap();
        assert_eq!(file.len() % 64, 3);
        let (start, len) = header_span(&file).unwrap().unwrap();
        let header = &file[start..start + len as usize];
        let spec = parse_header(
            header,
            (start + header.len()) as u64,
            Some(file.len() as u64),
        );
        assert_eq!(spec.unwrap().shape, vec![3]);
    }

    #[test]
    fn errors_name_the_offset() {
        let bad = "{'descr': '<f4', 'fortran_order': Maybe}";
        let err = parse_header(bad.as_bytes(), 10 + bad.len() as u64, None).unwrap_err();
        assert!(
            err.message().contains("byte offset 44"),
            "{}",
            err.message()
        );
        let f8 = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}";
        let err = parse_header(f8.as_bytes(), 10 + f8.len() as u64, None).unwrap_err();
        assert_eq!(err.kind(), "DTypeError");
    }
}
