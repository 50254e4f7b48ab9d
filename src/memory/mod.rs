//! Memory: what each device holds and what moves between them.
//!
//! The figures live in a thread-local, because arrays made from data exist before any runtime
//! does, and because each JS realm (the page, each worker) has its own module instance: one
//! realm, one set of figures. Native tests run each test on its own thread, so each sees only
//! its own bytes.

pub mod stats;

pub use stats::{Gauge, Stats, stats};
