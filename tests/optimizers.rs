//! `tandem::optimizers` against MLX's `mlx.optimizers` (`tests/golden/optimizers.json`, from
//! `make_optimizer_golden.py`): three updates of a tree of parameters per case, on both
//! devices; the settings MLX refuses; and memory exact once the optimizer is gone.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use serde_json::Value;
use tandem::memory::{Scope, stats};
use tandem::optimizers::{Optimizer, Rule};
use tandem::{Array, Device, ops};

fn golden() -> Value {
    let text = include_str!("golden/optimizers.json");
    serde_json::from_str(text).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn number(settings: &Value, key: &str, default: f64) -> f64 {
    settings.get(key).and_then(Value::as_f64).unwrap_or(default)
}

fn flag(settings: &Value, key: &str) -> bool {
    settings.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The case's rule, as the JS layer builds it from the same option names.
fn rule(name: &str, s: &Value) -> Rule {
    match name {
        "SGD" => Rule::Sgd {
            momentum: number(s, "momentum", 0.0),
            weight_decay: number(s, "weightDecay", 0.0),
            dampening: number(s, "dampening", 0.0),
            nesterov: flag(s, "nesterov"),
        },
        _ => {
            let betas = s.get("betas").map_or((0.9, 0.999), |b| {
                let b = floats(b);
                (b[0] as f64, b[1] as f64)
            });
            let decay = if name == "AdamW" { 0.01 } else { 0.0 };
            Rule::Adam {
                betas,
                eps: number(s, "eps", 1e-8),
                bias_correction: flag(s, "biasCorrection"),
                weight_decay: number(s, "weightDecay", decay),
            }
        }
    }
}

/// The learning rate at `step` (a number, or the schedule the golden names).
fn learning_rate(s: &Value, step: u64) -> f64 {
    let t = step as f64;
    match s["learningRate"].as_str() {
        None => s["learningRate"].as_f64().unwrap(),
        Some("cosineDecay") => {
            let k = t.min(8.0);
            0.01 + 0.5 * (1.0 + (std::f64::consts::PI / 8.0 * k).cos()) * (0.1 - 0.01)
        }
        Some("stepDecay") => 0.1 * 0.5f64.powf((t / 3.0).floor()),
        Some(other) => panic!("no schedule {other} in this test"),
    }
}

#[test]
fn every_case_matches_mlx_on_both_devices() {
    let runtime = common::gpu_runtime();
    let golden = golden();
    let shapes: Vec<Vec<usize>> = golden["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect()
        })
        .collect();
    let names = ["w", "layers[0]", "layers[1].b"];
    for device in [Device::Cpu, Device::Gpu] {
        for (c, case) in golden["cases"].as_array().unwrap().iter().enumerate() {
            let name = case["optimizer"].as_str().unwrap();
            let settings = &case["settings"];
            let mut opt = Optimizer::new(name, rule(name, settings)).unwrap();
            let on = |v: &Value, k: usize| {
                let a = Array::from_f32(&floats(v), &shapes[k]).unwrap();
                ops::astype(&a, a.dtype(), device)
            };
            let mut params: Vec<Array> = (0..3).map(|k| on(&case["params"][k], k)).collect();
            for step in 0..3 {
                let lr = learning_rate(settings, opt.step());
                let entries: Vec<(String, Array, Array)> = (0..3)
                    .map(|k| {
                        (
                            names[k].to_string(),
                            params[k].clone(),
                            on(&case["grads"][step][k], k),
                        )
                    })
                    .collect();
                params = opt.update(lr, &entries).unwrap();
                for k in 0..3 {
                    let got = pollster::block_on(runtime.read_f32(&params[k])).unwrap();
                    let want = floats(&case["after"][step][k]);
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            (g - w).abs() <= 1e-5 + 1e-5 * w.abs(),
                            "case {c} ({name} {settings}) on {device:?}, step {step}, {}[{i}]: \
                             {g} != MLX's {w}",
                            names[k]
                        );
                    }
                }
            }
            assert_eq!(opt.step(), 3);
        }
    }
}

#[test]
fn settings_mlx_refuses_and_mismatched_trees_are_errors() {
    let nesterov = Rule::Sgd {
        momentum: 0.0,
        weight_decay: 0.0,
        dampening: 0.0,
        nesterov: true,
    };
    let err = |r: tandem::error::Result<Optimizer>| format!("{:?}", r.err().unwrap());
    assert!(err(Optimizer::new("SGD", nesterov)).contains("Nesterov momentum needs"));
    let beta = Rule::Adam {
        betas: (1.0, 0.999),
        eps: 1e-8,
        bias_correction: false,
        weight_decay: 0.0,
    };
    assert!(err(Optimizer::new("Adam", beta)).contains("betas[0] must be in [0, 1)"));
    let good = Rule::Adam {
        betas: (0.9, 0.999),
        eps: 1e-8,
        bias_correction: false,
        weight_decay: 0.0,
    };
    let mut opt = Optimizer::new("Adam", good).unwrap();
    let p = Array::from_f32(&[1.0, 2.0], &[2]).unwrap();
    let g = Array::from_f32(&[1.0, 2.0, 3.0], &[3]).unwrap();
    let e = opt
        .update(0.1, &[("p".into(), p.clone(), g)])
        .err()
        .unwrap();
    assert!(format!("{e:?}").contains("has shape [2] but its gradient [3]"));
    assert_eq!(opt.step(), 0, "a rejected update changes nothing");
    let i = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    let e = opt
        .update(0.1, &[("i".into(), i.clone(), i)])
        .err()
        .unwrap();
    assert!(format!("{e:?}").contains("only float parameters"));
    opt.update(0.1, &[("p".into(), p.clone(), p.clone())])
        .unwrap();
    let wider = Array::from_f32(&[1.0; 3], &[3]).unwrap();
    let e = opt
        .update(0.1, &[("p".into(), wider.clone(), wider)])
        .err()
        .unwrap();
    assert!(format!("{e:?}").contains("a new model needs a new optimizer"));
}

#[test]
fn state_is_replaced_and_memory_is_exact() {
    let runtime = common::gpu_runtime();
    let active = || stats().active_bytes.get(Scope::All).current;
    pollster::block_on(runtime.synchronize()).unwrap();
    let before = active();
    {
        let rule = Rule::Adam {
            betas: (0.9, 0.999),
            eps: 1e-8,
            bias_correction: true,
            weight_decay: 0.0,
        };
        let mut opt = Optimizer::new("Adam", rule).unwrap();
        let mut p = ops::zeros(&[256], tandem::DType::Float32, Device::Gpu).unwrap();
        for _ in 0..5 {
            let g = ops::ones(&[256], tandem::DType::Float32, Device::Gpu).unwrap();
            p = opt.update(0.1, &[("p".into(), p, g)]).unwrap().remove(0);
            pollster::block_on(runtime.evaluate(&[p.clone()])).unwrap();
            pollster::block_on(runtime.synchronize()).unwrap();
            // The parameter and its two moments, 1 KiB each: the old ones are gone.
            assert_eq!(active() - before, 3 * 1024, "one parameter and its state");
        }
        // With bias correction, each step of a constant gradient moves by lr: 5 steps, -0.5.
        let got = pollster::block_on(runtime.read_f32(&p)).unwrap();
        assert!(
            got.iter().all(|&x| (x + 0.5).abs() < 1e-4),
            "{:?}",
            &got[..4]
        );
    }
    pollster::block_on(runtime.synchronize()).unwrap();
    assert_eq!(active(), before, "nothing is left behind");
}
