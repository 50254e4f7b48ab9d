//! Helpers shared by the native integration tests.
#![allow(dead_code)]

use proptest::test_runner::{Config, TestRunner};
use tandem::{Array, DType, Device, Runtime, RuntimeOptions};

/// A runtime on the machine's Vulkan adapter (Mesa lavapipe in CI); fails loudly without one.
/// Tests name each op's device, so the runtime need not time the devices to pick a default.
pub fn gpu_runtime() -> Runtime {
    let options = RuntimeOptions {
        require_gpu: true,
        default_device: Some(tandem::Device::Gpu),
        ..Default::default()
    };
    pollster::block_on(Runtime::new(options))
        .expect("a Vulkan adapter (install mesa-vulkan-drivers)")
}

/// Evaluates `a` and returns its words, row-major.
pub fn words(runtime: &Runtime, a: &Array) -> Vec<u32> {
    pollster::block_on(runtime.read_words(a)).unwrap().to_vec()
}

/// A small deterministic generator (PCG-style), so cases are reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407))
    }

    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.next_u32() as f32 / 4294967296.0)
    }

    /// A float32 array of `shape`, uniform in [-1, 1).
    pub fn floats(&mut self, shape: &[usize]) -> Array {
        let v: Vec<f32> = (0..shape.iter().product())
            .map(|_| self.uniform(-1.0, 1.0))
            .collect();
        Array::from_f32(&v, shape).unwrap()
    }
}

/// `n` random elements of `dtype`, as its storage words: floats over several magnitudes with
/// some special values, integers over their whole range, bools 0/1. The packed dtypes are
/// the word dtypes' values rounded (floats) or wrapped (integers) to them.
pub fn random_words(dtype: DType, n: usize, seed: u64) -> Vec<u32> {
    if dtype.is_packed() {
        let wide = random_words(dtype.compute(), n, seed);
        return tandem::dtype::packed::narrow_all(&wide, dtype);
    }
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| match dtype {
            DType::Float32 => random_float(&mut rng).to_bits(),
            DType::Bool => rng.next_u32() & 1,
            DType::Int32 | DType::Uint32 => match rng.next_u32() % 4 {
                0 => rng.next_u32(),
                _ => (rng.next_u32() % 21).wrapping_sub(10),
            },
            packed => unreachable!("{packed:?} is made from its compute dtype above"),
        })
        .collect()
}

fn random_float(rng: &mut Rng) -> f32 {
    match rng.next_u32() % 16 {
        0 => [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ][rng.next_u32() as usize % 9],
        1 => rng.uniform(-1e4, 1e4),
        2 => rng.uniform(-100.0, 100.0).round(),
        3 => rng.uniform(-1e-3, 1e-3),
        _ => rng.uniform(-10.0, 10.0),
    }
}

/// Whether two float32 words agree within `atol + rtol * |expected|`, with NaN equal to NaN
/// and infinities equal only to themselves.
pub fn close(got: u32, expected: u32, rtol: f32, atol: f32) -> bool {
    let (g, e) = (f32::from_bits(got), f32::from_bits(expected));
    if e.is_nan() || g.is_nan() {
        return e.is_nan() && g.is_nan();
    }
    if e.is_infinite() || g.is_infinite() {
        return g == e;
    }
    (g - e).abs() <= atol + rtol * e.abs()
}

/// Asserts that `got` matches `expected` element by element: exactly for integer and bool
/// dtypes, within tolerance for the floats. The message names the first mismatch. Packed
/// dtypes compare as their compute dtype's words; where a tolerance is allowed at all, a
/// half float also allows one step of its own precision (two computations that agree to
/// float32's tolerance can round to neighbouring halves).
pub fn assert_matches(
    what: &str,
    dtype: DType,
    got: &[u32],
    expected: &[u32],
    rtol: f32,
    atol: f32,
) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths differ");
    if dtype.is_packed() {
        let n = got.len() * dtype.per_word();
        let (g, e) = (
            tandem::dtype::packed::unpack(got, dtype, n),
            tandem::dtype::packed::unpack(expected, dtype, n),
        );
        let step = if dtype == DType::BFloat16 {
            2f32.powi(-7)
        } else {
            2f32.powi(-10)
        };
        let loose = rtol > 0.0 || atol > 0.0;
        let rtol = if loose && dtype.is_float() {
            rtol.max(step)
        } else {
            rtol
        };
        return assert_matches(what, dtype.compute(), &g, &e, rtol, atol);
    }
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        let ok = if dtype == DType::Float32 {
            close(g, e, rtol, atol)
        } else {
            g == e
        };
        assert!(
            ok,
            "{what}: element {i} is {} but the reference gives {}",
            show(g, dtype),
            show(e, dtype)
        );
    }
}

fn show(word: u32, dtype: DType) -> String {
    match dtype {
        DType::Float32 => format!("{:e}", f32::from_bits(word)),
        DType::Int32 => (word as i32).to_string(),
        _ => word.to_string(),
    }
}

/// A proptest runner of `cases` cases, otherwise proptest's defaults.
pub fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        ..Config::default()
    })
}

/// Evaluates `build` on both devices and requires the same shape, dtype and words (for ops
/// that move or compare words, exact on every device).
pub fn same_on_both(
    runtime: &Runtime,
    what: &str,
    build: impl Fn(Device) -> tandem::Result<Array>,
) {
    let (gpu, cpu) = (build(Device::Gpu).unwrap(), build(Device::Cpu).unwrap());
    assert_eq!(gpu.shape(), cpu.shape(), "{what}: shapes");
    assert_eq!(gpu.dtype(), cpu.dtype(), "{what}: dtypes");
    let (g, c) = (words(runtime, &gpu), words(runtime, &cpu));
    assert_matches(what, cpu.dtype(), &g, &c, 0.0, 0.0);
}
