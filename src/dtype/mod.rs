//! Element types, their sizes, and MLX's promotion rules restricted to tandem's dtypes.

pub mod convert;

use crate::error::{Error, Result};

/// The element type of an array.
///
/// Every dtype is stored in 4-byte words on both devices (WGSL has no 1-byte storage type), so
/// `bool` is stored as a `u32` that is 0 or 1. [`DType::size`] is the logical size that
/// `NDArray.nbytes` reports, as MLX does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Uint32,
    Int32,
    Float32,
}

impl DType {
    /// All dtypes, in promotion order.
    pub const ALL: [DType; 4] = [DType::Bool, DType::Uint32, DType::Int32, DType::Float32];

    /// The name used by the JS API (`"float32"`, …).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Uint32 => "uint32",
            DType::Int32 => "int32",
            DType::Float32 => "float32",
        }
    }

    /// Parses a JS dtype name.
    ///
    /// ```
    /// use tandem::DType;
    /// assert_eq!(DType::parse("int32"), Ok(DType::Int32));
    /// assert!(DType::parse("float64").is_err());
    /// ```
    pub fn parse(name: &str) -> Result<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .ok_or_else(|| {
                Error::DType(format!(
                    "unknown dtype \"{name}\"; expected one of \"float32\", \"int32\", \"uint32\", \"bool\""
                ))
            })
    }

    /// Logical bytes per element: 1 for `bool`, 4 otherwise.
    pub fn size(self) -> usize {
        match self {
            DType::Bool => 1,
            _ => 4,
        }
    }

    /// Whether the dtype is a floating-point type.
    pub fn is_float(self) -> bool {
        self == DType::Float32
    }
}

/// A Rust scalar type whose values are the elements of one dtype, stored as one 4-byte word.
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

/// The dtype two operands are computed in.
///
/// MLX's table for these four types, with one exception: MLX promotes `uint32` with `int32` to
/// `int64`, which WebGPU lacks. tandem gives `int32` there (as JAX does without 64-bit types), so
/// integer arithmetic stays exact and wraps like C.
///
/// ```
/// use tandem::{DType, dtype::promote};
/// assert_eq!(promote(DType::Bool, DType::Int32), DType::Int32);
/// assert_eq!(promote(DType::Int32, DType::Float32), DType::Float32);
/// ```
pub fn promote(a: DType, b: DType) -> DType {
    a.max(b)
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
    }

    #[test]
    fn promotion_is_symmetric_and_follows_mlx() {
        use DType::*;
        let expected = [
            (Bool, Bool, Bool),
            (Bool, Uint32, Uint32),
            (Bool, Int32, Int32),
            (Bool, Float32, Float32),
            (Uint32, Uint32, Uint32),
            (Uint32, Int32, Int32),
            (Uint32, Float32, Float32),
            (Int32, Int32, Int32),
            (Int32, Float32, Float32),
            (Float32, Float32, Float32),
        ];
        for (a, b, c) in expected {
            assert_eq!(promote(a, b), c, "{a:?} with {b:?}");
            assert_eq!(promote(b, a), c, "{b:?} with {a:?}");
        }
    }

    #[test]
    fn bool_counts_one_byte() {
        assert_eq!(DType::Bool.size(), 1);
        assert_eq!(DType::Float32.size(), 4);
    }
}
