//! The one error type of the crate. Each variant carries a message that names the op, the
//! inputs' shapes or sizes, and what was expected; the JS layer maps the variant to the `name`
//! of the thrown `Error`.

use std::fmt;

/// What went wrong, by kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Shapes that do not fit together, or data whose length does not match its shape.
    Shape(String),
    /// A dtype an op does not accept, or an unknown dtype name.
    DType(String),
    /// No usable device, or a device that failed.
    Device(String),
    /// An argument with a value outside what the op accepts.
    Value(String),
    /// An allocation past the memory limit, or past what the adapter allows.
    MemoryLimit(String),
    /// An array used after `dispose()`.
    DisposedArray(String),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The name of the JS `Error` this becomes, as the API's errors list them (`docs/reference.md`).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Shape(_) => "ShapeError",
            Error::DType(_) => "DTypeError",
            Error::Device(_) => "DeviceError",
            Error::Value(_) => "ValueError",
            Error::MemoryLimit(_) => "MemoryLimitError",
            Error::DisposedArray(_) => "DisposedArrayError",
        }
    }

    /// The human-readable message, without the kind.
    pub fn message(&self) -> &str {
        match self {
            Error::Shape(m)
            | Error::DType(m)
            | Error::Device(m)
            | Error::Value(m)
            | Error::MemoryLimit(m)
            | Error::DisposedArray(m) => m,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_prefixes_the_kind() {
        let e = Error::Shape("add: shapes [2] and [3] cannot be broadcast".into());
        assert_eq!(e.kind(), "ShapeError");
        assert_eq!(
            e.to_string(),
            "ShapeError: add: shapes [2] and [3] cannot be broadcast"
        );
    }
}
