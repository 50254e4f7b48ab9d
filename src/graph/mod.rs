//! What a graph node is made of, as pure data: shapes, broadcasting and strided layouts
//! (`shape`), and what a node computes (`primitive`: the closed set of primitives, each op's
//! dtype rules, and the program of a fused node). Nothing here runs anything.

pub mod primitive;
pub mod shape;
