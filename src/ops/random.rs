//! Random arrays. Each is a pure function of its key (Philox-4x32-10, see `cpu/random.rs`), so
//! the same key gives the same numbers on both devices; the JS layer derives keys from
//! `randomSeed`.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::primitive::{Distribution, Primitive};
use crate::graph::shape::checked_size;
use crate::stream::Stream;

/// The key of call number `call` under `seed`: successive calls under one seed get independent
/// keys, and the same seed replays the same sequence (how `randomSeed` works).
pub fn key_from_seed(seed: u64, call: u32) -> [u32; 2] {
    crate::cpu::random::derive_key(seed, call)
}

fn op_name(distribution: &Distribution) -> &'static str {
    match distribution {
        Distribution::Uniform { .. } => "randomUniform",
        Distribution::Normal { .. } => "randomNormal",
    }
}

fn random(
    shape: &[usize],
    key: [u32; 2],
    distribution: Distribution,
    stream: impl Into<Stream>,
) -> Array {
    let stream: Stream = stream.into();
    let primitive = Primitive::Random(key, distribution);
    Array::from_primitive(
        primitive,
        Vec::new(),
        shape.to_vec(),
        DType::Float32,
        stream,
    )
}

/// Floats uniform in [low, high).
pub fn uniform(
    shape: &[usize],
    key: [u32; 2],
    low: f32,
    high: f32,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    if !(low.is_finite() && high.is_finite() && low <= high) {
        return Err(Error::Value(format!(
            "randomUniform: need finite low <= high, got {low} and {high}"
        )));
    }
    let distribution = Distribution::Uniform {
        low: low.to_bits(),
        high: high.to_bits(),
    };
    checked_size(op_name(&distribution), shape)?;
    Ok(random(shape, key, distribution, stream))
}

/// Normal floats with mean `loc` and standard deviation `scale`.
pub fn normal(
    shape: &[usize],
    key: [u32; 2],
    loc: f32,
    scale: f32,
    stream: impl Into<Stream>,
) -> Result<Array> {
    let stream: Stream = stream.into();
    if !(loc.is_finite() && scale.is_finite() && scale >= 0.0) {
        return Err(Error::Value(format!(
            "randomNormal: need a finite loc and scale >= 0, got {loc} and {scale}"
        )));
    }
    let distribution = Distribution::Normal {
        loc: loc.to_bits(),
        scale: scale.to_bits(),
    };
    checked_size(op_name(&distribution), shape)?;
    Ok(random(shape, key, distribution, stream))
}
