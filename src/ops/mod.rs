//! Op builders, one file per family. They validate their inputs and create graph nodes; they
//! compute nothing.

pub mod binary;
pub mod construction;
pub mod contract;
pub mod conv;
pub mod creation;
pub mod fast;
pub mod indexing;
pub mod matmul;
pub mod random;
pub mod reduce;
pub mod scan;
pub mod shape;
pub mod sort;
pub mod statistics;
pub mod triangle;
pub mod unary;

pub use binary::{add, binary, clip, where_};
pub use construction::{PadMode, diag, diagonal, pad, repeat, roll, tile};
pub use contract::{einsum, tensordot};
pub use creation::{arange, eye, full, linspace, ones, zeros};
pub use indexing::{put_along_axis, scatter_add_along_axis, slice_update, take, take_along_axis};
pub use matmul::{addmm, matmul, outer};
pub use reduce::{logsumexp, mean, reduce, softmax};
pub use scan::scan;
pub use shape::{
    SplitAt, broadcast_to, concatenate, expand_dims, flatten, reshape, slice, split, squeeze,
    stack, stop_gradient, transpose,
};
pub use sort::{argsort, sort, topk};
pub use statistics::{all, any, std, var};
pub use triangle::{tril, triu};
pub use unary::{astype, nan_to_num, unary};
