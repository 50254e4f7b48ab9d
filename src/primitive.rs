//! What a graph node computes. The set is closed: each primitive has one CPU kernel (in `cpu/`)
//! and one GPU kernel (in `gpu/`), and no device code lives here.

/// An elementwise operation of two broadcast operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
}

impl BinaryOp {
    /// The op's name in the JS API, used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
        }
    }
}

/// The computation of a node that has inputs. Arrays made from data have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    Binary(BinaryOp),
}
