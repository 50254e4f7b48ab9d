//! The start-up measurements: whether the adapter's built-in `exp` keeps the accuracy promise
//! (when the device is made), what the runtime times to choose a matmul kernel (at the first
//! GPU matmul) and the default device (at start, on a fallback adapter), and what it keeps
//! of them between page loads. The timings evaluate through the scheduler, as any caller does,
//! and never call back into the runtime that runs them.

pub mod calibrate;
pub mod exp_probe;
pub mod matmul_tuning;
pub mod remembered;
pub mod settle;
