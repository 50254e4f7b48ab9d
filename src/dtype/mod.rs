//! Element types, their sizes, and MLX's promotion rules restricted to tandem's dtypes.

pub mod convert;
pub mod packed;

use crate::error::{Error, Result};

/// The element type of an array.
///
/// The word dtypes (`float32`, `int32`, `uint32`, `bool`) store one 4-byte word per element on
/// both devices; `bool` is a `u32` that is 0 or 1, and [`DType::size`] is its logical size (1),
/// which `NDArray.nbytes` reports, as MLX does. The packed dtypes (`float16`, `bfloat16`,
/// `int8`, `uint8`) store 2 or 1 bytes an element, several to a little-endian word (see
/// [`packed`]); kernels read them widened to their [`DType::compute`] dtype and round once on
/// store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Uint8,
    Uint32,
    Int8,
    Int32,
    Float16,
    BFloat16,
    Float32,
}

impl DType {
    /// All dtypes.
    pub const ALL: [DType; 8] = [
        DType::Bool,
        DType::Uint8,
        DType::Uint32,
        DType::Int8,
        DType::Int32,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
    ];

    /// The name used by the JS API (`"float32"`, …).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Uint8 => "uint8",
            DType::Uint32 => "uint32",
            DType::Int8 => "int8",
            DType::Int32 => "int32",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
        }
    }

    /// Parses a JS dtype name.
    ///
    /// ```
    /// use tandem::DType;
    /// assert_eq!(DType::parse("int32"), Ok(DType::Int32));
    /// assert_eq!(DType::parse("bfloat16"), Ok(DType::BFloat16));
    /// assert!(DType::parse("float64").is_err());
    /// ```
    pub fn parse(name: &str) -> Result<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .ok_or_else(|| {
                let names: Vec<String> = DType::ALL
                    .iter()
                    .rev()
                    .map(|d| format!("\"{}\"", d.name()))
                    .collect();
                Error::DType(format!(
                    "unknown dtype \"{name}\"; expected one of {}",
                    names.join(", ")
                ))
            })
    }

    /// Logical bytes per element: 1 for `bool`, `int8` and `uint8`, 2 for the half floats, 4
    /// otherwise.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::Int8 | DType::Uint8 => 1,
            DType::Float16 | DType::BFloat16 => 2,
            _ => 4,
        }
    }

    /// Whether elements are packed several to a word (`float16`, `bfloat16`, `int8`, `uint8`).
    pub fn is_packed(self) -> bool {
        self != DType::Bool && self.size() < 4
    }

    /// Elements per storage word: 2 or 4 for the packed dtypes, else 1.
    pub fn per_word(self) -> usize {
        if self.is_packed() { 4 / self.size() } else { 1 }
    }

    /// Storage words that hold `len` elements.
    pub fn words(self, len: usize) -> usize {
        len.div_ceil(self.per_word())
    }

    /// The word dtype kernels compute a packed dtype in: `float32` for the half floats,
    /// `int32` for `int8`, `uint32` for `uint8`; a word dtype is its own.
    pub fn compute(self) -> DType {
        match self {
            DType::Float16 | DType::BFloat16 => DType::Float32,
            DType::Int8 => DType::Int32,
            DType::Uint8 => DType::Uint32,
            other => other,
        }
    }

    /// Whether the dtype is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::Float32 | DType::Float16 | DType::BFloat16)
    }

    /// Whether the dtype is a signed integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::Int8 | DType::Int32)
    }

    /// Whether the dtype is an unsigned integer type (`bool` is not).
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::Uint8 | DType::Uint32)
    }
}

/// A Rust scalar type whose values are the elements of one word dtype.
pub trait Element: bytemuck::Pod {
    /// The dtype whose elements this type holds.
    const DTYPE: DType;
}

impl Element for f32 {
    const DTYPE: DType = DType::Float32;
}

impl Element for i32 {
    const DTYPE: DType = DType::Int32;
}

impl Element for u32 {
    const DTYPE: DType = DType::Uint32;
}

/// The dtype two operands are computed in: MLX's table, except where MLX reaches for a type
/// WebGPU lacks. MLX promotes `uint32` with `int32` or `int8` to `int64`, and `uint8` with
/// `int8` to `int16`; tandem gives `int32` there (as JAX does without 64-bit types), so
/// integer arithmetic stays exact and wraps like C.
///
/// ```
/// use tandem::{DType, dtype::promote};
/// assert_eq!(promote(DType::Bool, DType::Int32), DType::Int32);
/// assert_eq!(promote(DType::Int32, DType::Float16), DType::Float16);
/// assert_eq!(promote(DType::Float16, DType::BFloat16), DType::Float32);
/// ```
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    match (a, b) {
        _ if a == b => a,
        (Bool, x) | (x, Bool) => x,
        (Float32, _) | (_, Float32) | (Float16, BFloat16) | (BFloat16, Float16) => Float32,
        (f, _) | (_, f) if f.is_float() => f,
        _ => promote_integers(a, b),
    }
}

/// Two different integer dtypes: the wider of one signedness; for mixed signs the signed one
/// where it is wider, else `int32`.
fn promote_integers(a: DType, b: DType) -> DType {
    let wider = if a.size() >= b.size() { a } else { b };
    if a.is_signed_int() == b.is_signed_int() {
        return wider;
    }
    let (signed, unsigned) = if a.is_signed_int() { (a, b) } else { (b, a) };
    if signed.size() > unsigned.size() {
        signed
    } else {
        DType::Int32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::parse(d.name()), Ok(d));
        }
    }

    #[test]
    fn unknown_name_is_a_dtype_error() {
        let err = DType::parse("float16x").unwrap_err();
        assert_eq!(err.kind(), "DTypeError");
        assert!(err.message().contains("float16x"));
        assert!(err.message().contains("\"bfloat16\""));
    }

    /// MLX 0.32.4's `promote_types` over tandem's dtypes (`(zeros(a) + zeros(b)).dtype`), with
    /// int16 and int64 replaced by int32.
    #[test]
    fn promotion_is_symmetric_and_follows_mlx() {
        use DType::*;
        let order = [Bool, Uint8, Uint32, Int8, Int32, Float16, BFloat16, Float32];
        let table = [
            [Bool, Uint8, Uint32, Int8, Int32, Float16, BFloat16, Float32],
            [
                Uint8, Uint8, Uint32, Int32, Int32, Float16, BFloat16, Float32,
            ],
            [
                Uint32, Uint32, Uint32, Int32, Int32, Float16, BFloat16, Float32,
            ],
            [Int8, Int32, Int32, Int8, Int32, Float16, BFloat16, Float32],
            [
                Int32, Int32, Int32, Int32, Int32, Float16, BFloat16, Float32,
            ],
            [
                Float16, Float16, Float16, Float16, Float16, Float16, Float32, Float32,
            ],
            [
                BFloat16, BFloat16, BFloat16, BFloat16, BFloat16, Float32, BFloat16, Float32,
            ],
            [Float32; 8],
        ];
        for (i, a) in order.into_iter().enumerate() {
            for (j, b) in order.into_iter().enumerate() {
                assert_eq!(promote(a, b), table[i][j], "{a:?} with {b:?}");
            }
        }
    }

    #[test]
    fn sizes_and_words() {
        assert_eq!(DType::Bool.size(), 1);
        assert_eq!(DType::Float32.size(), 4);
        assert_eq!(DType::Float16.words(3), 2);
        assert_eq!(DType::Int8.words(5), 2);
        assert_eq!(DType::Bool.words(5), 5);
        assert!(!DType::Bool.is_packed());
        assert_eq!(DType::BFloat16.compute(), DType::Float32);
    }
}
