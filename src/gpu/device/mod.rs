//! What every GPU dispatch shares: the device context, command batches and the parameter
//! ring, readback, the pipeline and bind group caches, the device's error scopes and the
//! monitor's submit timestamps.

pub mod bind_groups;
pub mod buffers;
pub mod context;
pub mod encoder;
pub mod errors;
pub mod exp_choice;
pub mod grid;
pub mod params;
pub mod pipelines;
pub mod readback;
pub mod submit_stamps;
