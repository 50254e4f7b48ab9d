//! Op builders, one file per family. They validate their inputs and create graph nodes; they
//! compute nothing.

pub mod binary;

pub use binary::add;
