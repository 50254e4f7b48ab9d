//! Weights files in and out: safetensors (MLX's `mx.save_safetensors`, Hugging Face's format)
//! and NumPy's `.npy`, told apart by their content, never by a name.
//!
//! Reading is a push parser ([`Loader`]): the JS layer feeds it the file's bytes as they
//! arrive (from a `fetch`, a `Blob` or memory) and it hands back each tensor as soon as its
//! last byte is in, so a load holds at most one tensor's bytes twice. The header comes first
//! in both formats, so every check of the layout (dtypes, shapes, offsets, the total against
//! the memory limit) is made before any tensor data is read. Every malformed input is a typed
//! error (`ValueError` naming the byte offset or the tensor, `DTypeError` naming the tensor)
//! and never a panic; `tests/weights.rs` feeds the parsers random bytes.

pub mod loader;
pub mod npy;
pub mod safetensors;

pub use loader::{Loaded, Loader};

use crate::dtype::DType;
use crate::graph::shape::numel;

// Files are little-endian, and so are wasm and the machines tandem is built for natively: a
// tensor's bytes are its storage words' bytes.
#[cfg(target_endian = "big")]
compile_error!("tandem reads and writes weights files as little-endian memory");

/// One tensor as a file lays it out: where its bytes are (from the start of the data, which
/// follows the header), its dtype and shape, and how its bytes are ordered.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSpec {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub begin: u64,
    pub end: u64,
    /// A `.npy` of big-endian elements (`'>f4'`): each element's bytes are swapped on load.
    pub big_endian: bool,
    /// A `.npy` in Fortran (column-major) order: loaded as a transposed view.
    pub fortran: bool,
}

impl TensorSpec {
    /// Elements in the tensor.
    pub fn len(&self) -> usize {
        numel(&self.shape)
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes an element of `dtype` takes in a file: its size, with `bool` as one byte.
pub fn file_size(dtype: DType) -> usize {
    dtype.size()
}

/// A file's element count times its element size, or `None` where that overflows.
pub(crate) fn byte_len(dtype: DType, shape: &[usize]) -> Option<u64> {
    shape
        .iter()
        .try_fold(file_size(dtype) as u64, |n, &d| n.checked_mul(d as u64))
}

/// The file formats tandem reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Safetensors,
    Npy,
}

/// The format of a file from its first bytes, or `None` while too few have arrived to tell.
/// `.npy` starts with `\x93NUMPY`; safetensors with an 8-byte little-endian header length and
/// then the header's `{`.
pub fn sniff(prefix: &[u8]) -> Option<std::result::Result<Format, String>> {
    if prefix.starts_with(npy::MAGIC) {
        return Some(Ok(Format::Npy));
    }
    if prefix.len() < npy::MAGIC.len() && npy::MAGIC.starts_with(prefix) {
        return None;
    }
    if prefix.len() < 9 {
        return None;
    }
    if prefix[8] == b'{' {
        return Some(Ok(Format::Safetensors));
    }
    let shown: Vec<String> = prefix[..9].iter().map(|b| format!("{b:02x}")).collect();
    Some(Err(format!(
        "not a safetensors or .npy file: it starts with the bytes {} (a safetensors file starts \
         with its header's length and '{{', a .npy file with \\x93NUMPY)",
        shown.join(" ")
    )))
}

/// The file bytes of `len` elements of `dtype` stored in `words` (row-major): the storage's
/// own little-endian bytes, with `bool` narrowed to one byte an element.
pub fn file_bytes(words: &[u32], dtype: DType, len: usize) -> Vec<u8> {
    if dtype == DType::Bool {
        return words[..len].iter().map(|&w| u8::from(w != 0)).collect();
    }
    let bytes: &[u8] = bytemuck::cast_slice(words);
    bytes[..len * dtype.size()].to_vec()
}
