//! Observing the runtime: the one clock, profiles of evaluation, the busy time of each device
//! and the nvidia-smi view made from it, and the log of copies between the devices.
//!
//! The devices, the scheduler and the allocator emit to this layer (a span begins and ends, a
//! batch is submitted, bytes are copied); it never imports them, so it sits just above the
//! vocabulary (`error`, `stream`) and below everything that runs work. The allocator's own
//! statistics and memory history stay in `memory`, whose books they are.

pub mod busy;
pub mod clock;
pub mod profile;
pub mod smi;
pub mod transfers;
