//! Transforms of the lazy graph (MLX's `transforms.cpp`): `fuse` rewrites chains of
//! elementwise nodes as one fused node, and `compile` records a function's fused graph as a
//! tape and replays it. The function transforms (grad, vjp, jvp, vmap) belong here too.

pub mod compile;
pub mod fuse;
pub mod grad;
