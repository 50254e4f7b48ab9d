//! The ratios of tandem to its peers, and their geometric means.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::drive::*;
use super::format::*;
use super::plan::*;

/// Peer time / tandem time for one workload (>1: tandem faster).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ratio {
    pub(super) workload: String,
    pub(super) ratio: f64,
    pub(super) tandem_ms: f64,
    pub(super) peer: String,
    pub(super) peer_ms: f64,
}

#[derive(Debug, Default)]
pub(super) struct Ratios {
    /// tandem-gpu against the fastest WebGPU peer (tfjs-webgpu, jax-webgpu, jax-jit).
    pub(super) gpu: Vec<Ratio>,
    /// tandem-cpu against tfjs-wasm, each on one thread.
    pub(super) cpu: Vec<Ratio>,
    /// tandem-cpu-2t against tfjs-wasm-2t, each on two threads (a cross-origin isolated page).
    pub(super) cpu_2t: Vec<Ratio>,
    /// tandem-gpu against the hand-written WGSL: how far from this adapter's limit (not a peer).
    pub(super) hand: Vec<Ratio>,
    /// Figures outside the geometric means: the split against the peers' GPU-only, and
    /// tandem-gpu's adds against TF.js's default CPU forwarding.
    pub(super) extra: Vec<(String, Ratio)>,
}

pub(super) const PEERS_GPU: [&str; 3] = ["tfjs-webgpu", "jax-webgpu", "jax-jit"];

/// MLX's example in each runtime's every placement.
pub(super) const MLX_MODES: [&str; 3] = ["mlx-gpu", "mlx-split", "mlx-cpu"];

/// A workload run in several modes (`modes`: MLX's example in each placement, or one model
/// workload): tandem's fastest mode (any stream, compiled or not) against the fastest of every
/// peer's modes, TF.js wasm on 2 threads included.
pub(super) fn best_modes(
    reports: &[Report],
    title: &str,
    modes: &[&str],
) -> Option<(String, Ratio)> {
    let fastest = |tandem: bool| {
        reports
            .iter()
            .filter(|r| r.runtime.peer != tandem && r.runtime.id != "webgpu-hand")
            .flat_map(|r| {
                modes
                    .iter()
                    .filter_map(move |w| Some((r.runtime.id, *w, r.median(w)?)))
            })
            .min_by(|a, b| a.2.total_cmp(&b.2))
    };
    let ((tandem, mode, tandem_ms), (peer, peer_mode, peer_ms)) = (fastest(true)?, fastest(false)?);
    let (what, peer) = if modes.len() > 1 {
        let what =
            format!("{title}: tandem's best mode ({tandem} {mode}) / every peer's best mode");
        (what, format!("{peer} {peer_mode}"))
    } else {
        (
            format!("{title}: tandem's best mode ({tandem}) / every peer's best mode"),
            peer.to_string(),
        )
    };
    let ratio = Ratio {
        workload: mode.to_string(),
        ratio: peer_ms / tandem_ms,
        tandem_ms,
        peer,
        peer_ms,
    };
    Some((what, ratio))
}

impl Ratios {
    pub(super) fn compute(workloads: &[Workload], reports: &[Report]) -> Ratios {
        let median = |runtime: &str, workload: &str| {
            let report = reports.iter().find(|r| r.runtime.id == runtime);
            report.and_then(|r| r.median(workload))
        };
        let named = |runtime: &str, workload: &str| {
            median(runtime, workload).map(|ms| (runtime.to_string(), ms))
        };
        let best_gpu_peer = |workload: &str| {
            PEERS_GPU
                .iter()
                .filter_map(|p| named(p, workload))
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let ratio = |tandem: Option<f64>, peer: Option<(String, f64)>, workload: &str| {
            let (tandem_ms, (peer, peer_ms)) = (tandem?, peer?);
            Some(Ratio {
                workload: workload.to_string(),
                ratio: peer_ms / tandem_ms,
                tandem_ms,
                peer,
                peer_ms,
            })
        };
        let mut out = Ratios::default();
        for w in workloads {
            let id = w.id.as_str();
            let gpu = median("tandem-gpu", id);
            match id {
                "mlx-split" => {
                    let what = "MLX example: tandem split / best peer GPU-only";
                    if let Some(r) = ratio(gpu, best_gpu_peer("mlx-gpu"), id) {
                        out.extra.push((what.into(), r));
                    }
                }
                "add-chain-fwd" => {
                    let what = "1000 chained adds: tandem-gpu / TF.js webgpu at its default \
                                (ops under 1000 elements run on the CPU)";
                    let tandem = median("tandem-gpu", "add-chain");
                    if let Some(r) = ratio(tandem, named("tfjs-webgpu", id), id) {
                        out.extra.push((what.into(), r));
                    }
                }
                _ => {
                    // jax-jit runs MLX's example on the GPU only.
                    let jit_id = if id.starts_with("mlx-") {
                        "mlx-gpu"
                    } else {
                        id
                    };
                    for runtime in ["tandem-gpu-compiled", "tandem-cpu-compiled"] {
                        let what = format!("{}: {runtime} / jax-jit", w.title);
                        if let Some(r) = ratio(median(runtime, id), named("jax-jit", jit_id), id) {
                            out.extra.push((what, r));
                        }
                    }
                    out.gpu.extend(ratio(gpu, best_gpu_peer(id), id));
                    let cpu = median("tandem-cpu", id);
                    out.cpu.extend(ratio(cpu, named("tfjs-wasm", id), id));
                    let cpu_2t = median("tandem-cpu-2t", id);
                    out.cpu_2t
                        .extend(ratio(cpu_2t, named("tfjs-wasm-2t", id), id));
                    out.hand.extend(ratio(gpu, named("webgpu-hand", id), id));
                }
            }
        }
        out.extra
            .extend(best_modes(reports, "MLX example", &MLX_MODES));
        for w in workloads
            .iter()
            .filter(|w| w.group == "model" || w.group == "train")
        {
            out.extra
                .extend(best_modes(reports, &w.title, &[w.id.as_str()]));
        }
        out
    }

    pub(super) fn text(&self, workloads: &[Workload]) -> String {
        let label = workloads
            .iter()
            .map(|w| w.title.len())
            .max()
            .unwrap_or(20)
            .max(24)
            + 2;
        let find = |list: &[Ratio], id: &str| list.iter().find(|r| r.workload == id).cloned();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "ratios: other median / tandem median, same device kind (>1: tandem faster)"
        );
        let _ = writeln!(
            out,
            "{:label$}{:>34}{:>24}{:>30}{:>26}",
            "workload",
            "tandem-gpu / best WebGPU peer",
            "tandem-cpu / tfjs-wasm",
            "tandem-cpu-2t / tfjs-wasm-2t",
            "tandem-gpu / webgpu-hand"
        );
        let named_peer = ["webgpu-hand", "tfjs-wasm", "tfjs-wasm-2t"];
        for w in workloads {
            let lists = [&self.gpu, &self.cpu, &self.cpu_2t, &self.hand];
            let cells = lists.map(|list| find(list, &w.id));
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let [g, c, t, h] = cells.map(|r| match r {
                Some(r) if named_peer.contains(&r.peer.as_str()) => fmt_ratio(r.ratio),
                Some(r) => format!("{} ({})", fmt_ratio(r.ratio), r.peer),
                None => "-".into(),
            });
            let _ = writeln!(out, "{:label$}{g:>34}{c:>24}{t:>30}{h:>26}", w.title);
        }
        let mean = |list: &[Ratio]| match geomean(list) {
            Some(m) => format!("{} over {}", fmt_ratio(m), list.len()),
            None => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:label$}{:>34}{:>24}{:>30}{:>26}",
            "geometric mean",
            mean(&self.gpu),
            mean(&self.cpu),
            mean(&self.cpu_2t),
            mean(&self.hand)
        );
        let _ = writeln!(
            out,
            "(webgpu-hand is hand-written WGSL measured in the same run: the adapter's limit, not a peer)"
        );
        for (what, r) in &self.extra {
            let _ = writeln!(
                out,
                "{what}: {} ({}: {} ms, tandem: {} ms; not in the geometric means)",
                fmt_ratio(r.ratio),
                r.peer,
                fmt_number(r.peer_ms),
                fmt_number(r.tandem_ms)
            );
        }
        out
    }

    pub(super) fn json(&self) -> Value {
        let list = |l: &[Ratio]| {
            Value::Object(
                l.iter()
                    .map(|r| {
                        (
                            r.workload.clone(),
                            json!({"ratio": r.ratio, "tandem_ms": r.tandem_ms, "peer": r.peer, "peer_ms": r.peer_ms}),
                        )
                    })
                    .collect(),
            )
        };
        json!({
            "meaning": "peer median / tandem median (>1: tandem faster)",
            "tandem_gpu_vs_best_webgpu_peer": {"workloads": list(&self.gpu), "geomean": geomean(&self.gpu), "count": self.gpu.len()},
            "tandem_cpu_vs_tfjs_wasm": {"workloads": list(&self.cpu), "geomean": geomean(&self.cpu), "count": self.cpu.len()},
            "tandem_cpu_2t_vs_tfjs_wasm_2t": {"workloads": list(&self.cpu_2t), "geomean": geomean(&self.cpu_2t), "count": self.cpu_2t.len()},
            "tandem_gpu_vs_webgpu_hand": {"workloads": list(&self.hand), "geomean": geomean(&self.hand), "count": self.hand.len()},
            "extra": self.extra.iter().map(|(what, r)| json!({
                "what": what, "workload": r.workload, "ratio": r.ratio, "tandem_ms": r.tandem_ms,
                "peer": r.peer, "peer_ms": r.peer_ms,
            })).collect::<Vec<_>>(),
        })
    }
}

pub(super) fn fmt_ratio(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 0.1 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

pub(super) fn geomean(list: &[Ratio]) -> Option<f64> {
    (!list.is_empty())
        .then(|| (list.iter().map(|r| r.ratio.ln()).sum::<f64>() / list.len() as f64).exp())
}

// ---- peers.json ---------------------------------------------------------------------------
