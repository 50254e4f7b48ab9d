//! The start-up measurements: what the runtime times once, when it first gets a device, to
//! choose a matmul kernel and the default device. They evaluate through the scheduler, as any
//! caller does, and never call back into the runtime that runs them.

pub mod calibrate;
pub mod matmul_tuning;
