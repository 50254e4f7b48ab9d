//! Transforms of the lazy graph (MLX's `transforms.cpp`): `fuse` rewrites chains of
//! elementwise nodes as one fused node, and `compile` records a function's fused graph as a
//! tape and replays it. The function transforms live here too: `grad` (reverse mode, and
//! forward mode and `checkpoint` on it) and `vmap`.

pub mod compile;
pub mod fuse;
pub mod grad;
pub mod vmap;
