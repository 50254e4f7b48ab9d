//! Runs MLX's gradients of tandem's ops (`tests/golden/grad.json`, made by
//! `tests/golden/make_grad_golden.py`) through tandem's reverse mode on a device: for each
//! case, `sum(op(*inputs) * w)` is differentiated and every gradient element is checked
//! against `mx.grad`'s, and, where the loss is smooth, against central differences of the
//! NumPy reference in float64. Shared by the native test (`tests/grad_golden.rs`) and the browser
//! tests (`tests/web/kernels.rs`); it uses `golden_cases` (the ops by name), which each of them
//! declares.
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::Value;
use tandem::graph::primitive::{BinaryOp, ReduceOp};
use tandem::transforms::grad::value_and_grad;
use tandem::{Array, Device, Runtime, ops};

use crate::golden_cases;

pub const GRAD: &str = include_str!("../golden/grad.json");

/// The ops whose gradient MLX takes and tandem has no rule for yet (each an error that names
/// it).
pub const WITHOUT_RULES: &[&str] = &[];

/// The number of cases.
pub fn count() -> usize {
    let file: Value = serde_json::from_str(GRAD).unwrap();
    file["cases"].as_array().unwrap().len()
}

fn weights(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let w: Vec<f32> = (0..n).map(|i| 0.5 + (i % 7) as f32 * 0.25).collect();
    Array::from_f32(&w, shape).unwrap()
}

/// Whether `got` is within `bound` of `want` (NaN never is).
fn within(got: f32, want: f32, bound: f32) -> bool {
    (got - want).abs() <= bound
}

fn floats(spec: &Value) -> Vec<f32> {
    spec["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect()
}

/// Runs every case on `device`: the failures, and the ops that had no rule, with counts.
pub async fn run_all(runtime: &Runtime, device: Device) -> (Vec<String>, BTreeMap<String, usize>) {
    let file: Value = serde_json::from_str(GRAD).unwrap();
    let (mut failures, mut missing) = (Vec::new(), BTreeMap::new());
    for case in file["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let op = case["op"].as_str().unwrap();
        match run_case(runtime, case, device).await {
            Ok(()) => {}
            Err(Outcome::Missing) => *missing.entry(op.to_string()).or_insert(0) += 1,
            Err(Outcome::Failed(why)) => failures.push(format!("{name} ({op}): {why}")),
        }
    }
    (failures, missing)
}

enum Outcome {
    Missing,
    Failed(String),
}

async fn run_case(runtime: &Runtime, case: &Value, device: Device) -> Result<(), Outcome> {
    let (op, params) = (case["op"].as_str().unwrap(), &case["params"]);
    let inputs: Vec<Array> = case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(golden_cases::array_of)
        .collect();
    let wrt: Vec<usize> = case["wrt"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_u64().unwrap() as usize)
        .collect();
    let primals: Vec<Array> = wrt.iter().map(|&k| inputs[k].clone()).collect();
    let loss = |v: &[Array]| {
        let mut xs = inputs.clone();
        for (slot, x) in wrt.iter().zip(v) {
            xs[*slot] = x.clone();
        }
        let y = golden_cases::apply(op, params, &xs, device)?.remove(0);
        let weighted = ops::binary(BinaryOp::Multiply, &y, &weights(y.shape()), device)?;
        ops::reduce(ReduceOp::Sum, &weighted, None, false, device)
    };
    let grads = match value_and_grad(loss, &primals) {
        Ok((_, grads)) => grads,
        Err(e) if e.to_string().contains("has no derivative yet") => return Err(Outcome::Missing),
        Err(e) => return Err(Outcome::Failed(e.to_string())),
    };
    let (rtol, atol) = match device {
        Device::Cpu => (
            case["rtol"].as_f64().unwrap() as f32,
            case["atol"].as_f64().unwrap() as f32,
        ),
        Device::Gpu => (1e-3, 1e-4),
    };
    for (k, (g, want)) in grads
        .iter()
        .zip(case["grads"].as_array().unwrap())
        .enumerate()
    {
        let got = runtime
            .read_f32(g)
            .await
            .map_err(|e| Outcome::Failed(format!("gradient {k}: {e}")))?;
        let want = floats(want);
        let scale = want.iter().fold(1f32, |m, v| m.max(v.abs()));
        let bad = got
            .iter()
            .zip(&want)
            .position(|(g, w)| !within(*g, *w, atol * scale + rtol * w.abs()));
        if got.len() != want.len() || bad.is_some() {
            let at = bad.unwrap_or(0);
            return Err(Outcome::Failed(format!(
                "gradient {k} element {at} is {:?}, MLX gives {:?}",
                got.get(at),
                want.get(at)
            )));
        }
        check_float64(&case["float64_differences"], k, &got, scale)?;
    }
    Ok(())
}

/// Gradient `k` against the case's central differences in float64 (NumPy's reference, made
/// by the script), where the loss is smooth and MLX agrees with them: to 1e-3 of the largest
/// gradient element, as float32 kernels allow.
fn check_float64(differences: &Value, k: usize, got: &[f32], scale: f32) -> Result<(), Outcome> {
    let Some(slopes) = differences.get(k).and_then(Value::as_array) else {
        return Ok(());
    };
    for (i, (g, slope)) in got.iter().zip(slopes).enumerate() {
        let Some(slope) = slope.as_f64() else {
            continue;
        };
        if (*g as f64 - slope).abs() > 1e-3 * scale as f64 + 1e-3 * slope.abs() {
            return Err(Outcome::Failed(format!(
                "gradient {k} element {i} is {g}, float64 central differences give {slope}"
            )));
        }
    }
    Ok(())
}
