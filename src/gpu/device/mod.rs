//! What every GPU dispatch shares: the device context, command batches and the parameter
//! ring, readback (the one path every mapping takes), the pipeline and bind group caches,
//! the device's error scopes, the one timestamp query set, and the kernel choices.

pub mod bind_groups;
pub mod buffers;
pub mod choices;
pub mod context;
pub mod encoder;
pub mod errors;
pub mod grid;
pub mod params;
pub mod pipelines;
pub mod readback;
pub mod timestamps;
