//! The push parser of a weights file: bytes in, in chunks of any size; tensors out, each as
//! soon as its last byte has arrived.

use crate::array::Array;
use crate::dtype::convert::cast;
use crate::dtype::{DType, packed};
use crate::error::{Error, Result};
use crate::memory::allocator::ensure_room;
use crate::stream::Device;
use crate::weights::{Format, TensorSpec, npy, safetensors, sniff};

/// A tensor the loader finished: its name (`"the array"` for a `.npy` file) and its array,
/// whose data is on the host.
pub struct Loaded {
    pub name: String,
    pub array: Array,
}

/// What the loader does with the tensors it reads.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Floating-point tensors are converted to this float dtype (integer and bool tensors
    /// keep theirs, as MLX's loaders convert only float weights).
    pub dtype: Option<DType>,
    /// The device the tensors will live on, for the memory check.
    pub device: Device,
    /// The file's size where the source knows it in advance (a `Blob`, bytes, a response's
    /// `Content-Length`): a file shorter or longer than its header says fails at once.
    pub total: Option<u64>,
}

/// The parser's state: the header's bytes until it is read, then the tensors' data.
pub struct Loader {
    options: Options,
    received: u64,
    prefix: Vec<u8>,
    body: Option<Body>,
}

/// What the header said, and how far the data has come.
struct Body {
    format: Format,
    tensors: Vec<TensorSpec>,
    metadata: Vec<(String, String)>,
    data_start: u64,
    /// The index of the tensor being filled.
    next: usize,
    /// Its storage words, with the bytes that have arrived.
    partial: Vec<u32>,
    filled: usize,
}

impl Loader {
    pub fn new(options: Options) -> Loader {
        Loader {
            options,
            received: 0,
            prefix: Vec::new(),
            body: None,
        }
    }

    /// The file's format, once its first bytes have arrived.
    pub fn format(&self) -> Option<Format> {
        self.body.as_ref().map(|b| b.format)
    }

    /// The file's size as its header gives it, once the header is read.
    pub fn total(&self) -> Option<u64> {
        let b = self.body.as_ref()?;
        Some(b.data_start + b.tensors.last().map_or(0, |t| t.end))
    }

    /// The safetensors metadata (empty for `.npy` or before the header).
    pub fn metadata(&self) -> &[(String, String)] {
        self.body.as_ref().map_or(&[], |b| &b.metadata)
    }

    /// Bytes fed so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Takes the next bytes of the file; returns the tensors they completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Loaded>> {
        self.received += chunk.len() as u64;
        let mut done = Vec::new();
        if self.body.is_some() {
            self.fill(chunk, &mut done)?;
            return Ok(done);
        }
        self.prefix.extend_from_slice(chunk);
        if let Some(start) = self.read_header()? {
            let prefix = std::mem::take(&mut self.prefix);
            self.fill(&prefix[start..], &mut done)?;
        }
        Ok(done)
    }

    /// The end of the file: the tensors still due (empty ones), or an error naming where the
    /// file stopped short.
    pub fn finish(&mut self) -> Result<Vec<Loaded>> {
        let mut done = Vec::new();
        if self.body.is_none() {
            return Err(Error::Value(format!(
                "load: the file ends at byte offset {} before its header does",
                self.received
            )));
        }
        self.fill(&[], &mut done)?;
        let body = self.body.as_ref().expect("checked above");
        if let Some(t) = body.tensors.get(body.next) {
            return Err(Error::Value(format!(
                "load: the file is truncated: it ends at byte offset {}, inside {} (bytes {} to \
                 {}); the header says the file has {} bytes",
                self.received,
                describe(t),
                body.data_start + t.begin,
                body.data_start + t.end,
                self.total().unwrap_or(0)
            )));
        }
        Ok(done)
    }

    /// Reads the header once its bytes are in; returns where the data starts in `prefix`.
    fn read_header(&mut self) -> Result<Option<usize>> {
        let format = match sniff(&self.prefix) {
            None => return Ok(None),
            Some(Ok(format)) => format,
            Some(Err(why)) => return Err(Error::Value(format!("load: {why}"))),
        };
        let (start, len) = match format {
            Format::Safetensors => {
                let first: [u8; 8] = self.prefix[..8].try_into().expect("sniff saw 9 bytes");
                (8, safetensors::header_len(first)?)
            }
            Format::Npy => match npy::header_span(&self.prefix)? {
                Some(span) => span,
                None => return Ok(None),
            },
        };
        let end = start as u64 + len;
        if (self.prefix.len() as u64) < end {
            return Ok(None);
        }
        let header = &self.prefix[start..end as usize];
        let (tensors, metadata) = match format {
            Format::Safetensors => {
                let h = safetensors::parse_header(header, self.options.total)?;
                (h.tensors, h.metadata)
            }
            Format::Npy => (
                vec![npy::parse_header(header, end, self.options.total)?],
                Vec::new(),
            ),
        };
        self.check_memory(&tensors)?;
        self.body = Some(Body {
            format,
            tensors,
            metadata,
            data_start: end,
            next: 0,
            partial: Vec::new(),
            filled: 0,
        });
        Ok(Some(end as usize))
    }

    /// Fails with `MemoryLimitError` when the tensors as stored would not fit under the limit.
    fn check_memory(&self, tensors: &[TensorSpec]) -> Result<()> {
        let bytes: u64 = tensors
            .iter()
            .map(|t| (self.stored_dtype(t).words(t.len()) * 4) as u64)
            .sum();
        ensure_room(
            &format!(
                "load: the file's {} tensors ({bytes} bytes as stored)",
                tensors.len()
            ),
            bytes,
            self.options.device,
        )
    }

    fn stored_dtype(&self, t: &TensorSpec) -> DType {
        match self.options.dtype {
            Some(to) if t.dtype.is_float() => to,
            _ => t.dtype,
        }
    }

    /// Copies data bytes into the tensors in turn, finishing each that fills up.
    fn fill(&mut self, mut bytes: &[u8], done: &mut Vec<Loaded>) -> Result<()> {
        loop {
            let body = self.body.as_mut().expect("the header is read");
            let Some(t) = body.tensors.get(body.next) else {
                if !bytes.is_empty() {
                    return Err(Error::Value(format!(
                        "load: {} bytes follow the last tensor's data, which ends at byte offset {}",
                        bytes.len(),
                        self.received - bytes.len() as u64
                    )));
                }
                return Ok(());
            };
            let size = (t.end - t.begin) as usize;
            if body.filled == 0 && body.partial.is_empty() {
                body.partial = vec![0u32; size.div_ceil(4)];
            }
            let take = (size - body.filled).min(bytes.len());
            let target: &mut [u8] = bytemuck::cast_slice_mut(&mut body.partial);
            target[body.filled..body.filled + take].copy_from_slice(&bytes[..take]);
            body.filled += take;
            bytes = &bytes[take..];
            if body.filled < size {
                return Ok(());
            }
            let words = std::mem::take(&mut body.partial);
            let spec = t.clone();
            body.filled = 0;
            body.next += 1;
            done.push(self.finished(&spec, words)?);
        }
    }

    /// A tensor whose bytes are all in, as an array in its stored dtype.
    fn finished(&self, t: &TensorSpec, mut words: Vec<u32>) -> Result<Loaded> {
        let n = t.len();
        if t.big_endian {
            swap_bytes(&mut words, t.dtype.size());
        }
        if t.dtype == DType::Bool {
            words = (0..n)
                .map(|i| u32::from(packed::bits(&words, DType::Uint8, i) != 0))
                .collect();
        }
        let to = self.stored_dtype(t);
        if to != t.dtype {
            words = cast(&words, n, t.dtype, to).into_owned();
        }
        let array = if t.fortran {
            let reversed: Vec<usize> = t.shape.iter().rev().copied().collect();
            let stored = Array::from_words(words, &reversed, to)?;
            crate::ops::transpose(&stored, None, Device::Cpu)?
        } else {
            Array::from_words(words, &t.shape, to)?
        };
        Ok(Loaded {
            name: t.name.clone(),
            array,
        })
    }
}

fn describe(t: &TensorSpec) -> String {
    if t.name == "the array" {
        "the array's data".into()
    } else {
        format!("tensor \"{}\"", t.name)
    }
}

/// Reverses the bytes of each `size`-byte element (a big-endian `.npy`'s data).
fn swap_bytes(words: &mut [u32], size: usize) {
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(words);
    for element in bytes.chunks_exact_mut(size) {
        element.reverse();
    }
}
