//! The peers benchmark's own tests: options, catalog, pins, ratios, cells, dates.

use std::time::Duration;

use serde_json::Value;

use crate::cmd::root;

use super::drive::*;
use super::format::*;
use super::json::*;
use super::npm::*;
use super::plan::*;
use super::ratios::*;
use super::rounds::*;
use super::table::*;
use serde_json::json;

fn catalog() -> Vec<Workload> {
    load_catalog(&root().join("bench/peers/workloads.json")).unwrap()
}

#[test]
fn parses_options() {
    let o = parse_args(&[
        "--quick",
        "--only",
        "exp,matmul-256",
        "--runtimes=tandem-gpu,tfjs-webgpu",
    ])
    .unwrap();
    assert!(o.quick);
    assert_eq!(
        o.only,
        Some(vec!["exp".to_string(), "matmul-256".to_string()])
    );
    let ids: Vec<&str> = o.runtimes.iter().map(|r| r.id).collect();
    assert_eq!(ids, ["tandem-gpu", "tfjs-webgpu"]);
    assert_eq!(parse_args(&[]).unwrap().runtimes.len(), RUNTIMES.len());
    assert!(
        parse_args(&["--runtimes", "torch"])
            .unwrap_err()
            .contains("tandem-gpu")
    );
    assert!(parse_args(&["--only"]).is_err());
    assert!(parse_args(&["--fast"]).is_err());
    assert_eq!(parse_args(&[]).unwrap().rounds, 1);
    assert_eq!(parse_args(&["--rounds", "3"]).unwrap().rounds, 3);
    assert_eq!(parse_args(&["--rounds=2", "--quick"]).unwrap().rounds, 2);
    for bad in [
        &["--rounds", "0"][..],
        &["--rounds=21"],
        &["--rounds", "x"],
        &["--rounds"],
    ] {
        let err = parse_args(bad).unwrap_err();
        assert!(err.contains("--rounds needs"), "{bad:?}: {err}");
    }
}

#[test]
fn rounds_alternate_the_order_and_pool_the_timed_runs() {
    let runtimes = runtimes_named(&list("tandem-cpu-2t,tfjs-wasm-2t")).unwrap();
    let ids = |round| -> Vec<&str> { order(round, &runtimes).iter().map(|r| r.id).collect() };
    assert_eq!(ids(0), ["tandem-cpu-2t", "tfjs-wasm-2t"]);
    assert_eq!(ids(1), ["tfjs-wasm-2t", "tandem-cpu-2t"]);
    let timed = |runtime, times: &[f64], longest: Option<f64>| {
        let mut r = report(runtime, &[]);
        let median = times[times.len() / 2];
        let result = json!({
            "status": "ok", "times": times, "median": median, "runs": times.len(), "warmup": 2,
            "min": times[0], "max": times[times.len() - 1], "longestTaskMs": longest,
            "derived": {"unit": "GB/s", "median": 8.0 / median},
        });
        r.results.insert("exp-1m".into(), result);
        r
    };
    let rounds = vec![
        vec![
            timed("tandem-cpu-2t", &[1.0, 2.0, 3.0], None),
            timed("tfjs-wasm-2t", &[5.0], Some(60.0)),
        ],
        vec![
            timed("tfjs-wasm-2t", &[7.0], None),
            timed("tandem-cpu-2t", &[4.0, 5.0, 6.0], Some(52.0)),
        ],
    ];
    let merged = merge(&runtimes, rounds);
    assert_eq!(merged.len(), 2);
    assert_eq!(merged[0].runtime.id, "tandem-cpu-2t");
    let ours = merged[0].result("exp-1m").unwrap();
    assert_eq!(ours["times"], json!([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert_eq!(
        (ours["median"].as_f64(), ours["runs"].as_u64()),
        (Some(3.5), Some(6))
    );
    assert_eq!(
        (ours["min"].as_f64(), ours["max"].as_f64()),
        (Some(1.0), Some(6.0))
    );
    assert_eq!(ours["longestTaskMs"].as_f64(), Some(52.0));
    assert_eq!(ours["warmup"].as_f64(), Some(4.0));
    // 8 / 2 GB/s at 2 ms is 8 / 3.5 at 3.5 ms.
    assert!((ours["derived"]["median"].as_f64().unwrap() - 8.0 / 3.5).abs() < 1e-12);
    let theirs = merged[1].result("exp-1m").unwrap();
    assert_eq!(theirs["median"].as_f64(), Some(6.0));
    assert_eq!(theirs["longestTaskMs"].as_f64(), Some(60.0));
}

#[test]
fn a_failure_in_any_round_stands() {
    let ok = json!({"status": "ok", "times": [1.0], "median": 1.0});
    let failed = json!({"status": "failed", "check": "y[3] wrong", "median": 1.0});
    assert_eq!(pool(ok.clone(), &failed), failed);
    assert_eq!(pool(failed.clone(), &ok), failed);
}

#[test]
fn selects_by_group_or_id_in_catalog_order() {
    let all = catalog();
    assert!(all.len() >= 16);
    let picked = select(
        &all,
        Some(&["softmax".into(), "exp".into(), "sum-16m".into()]),
    )
    .unwrap();
    let ids: Vec<&str> = picked.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "exp-1m",
            "exp-16m",
            "exp-100003",
            "sum-16m",
            "softmax-4096x1024",
            "softmax-1000x333"
        ]
    );
    assert!(
        select(&all, Some(&["conv".into()]))
            .unwrap_err()
            .contains("matmul")
    );
    assert_eq!(select(&all, None).unwrap(), all);
}

#[test]
fn the_committed_package_json_pins_exact_versions() {
    let deps = pinned_dependencies(&root().join("bench")).unwrap();
    let find = |n: &str| {
        deps.iter()
            .find(|(name, _)| name == n)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(find("@tensorflow/tfjs"), Some("4.22.0"));
    assert_eq!(find("@tensorflow/tfjs-core"), Some("4.22.0"));
    assert_eq!(find("@tensorflow/tfjs-backend-webgpu"), Some("4.22.0"));
    assert_eq!(find("@tensorflow/tfjs-backend-wasm"), Some("4.22.0"));
    assert_eq!(find("@jax-js/jax"), Some("0.1.25"));
}

fn report(runtime: &str, medians: &[(&str, f64)]) -> Report {
    Report {
        runtime: RUNTIMES.iter().find(|r| r.id == runtime).unwrap(),
        results: medians
            .iter()
            .map(|(id, ms)| (id.to_string(), json!({"status": "ok", "median": ms})))
            .collect(),
        page: Value::Null,
        wall: Duration::ZERO,
    }
}

#[test]
fn the_best_modes_line_compares_each_sides_fastest_mode() {
    let reports = [
        report("tandem-gpu", &[("mlx-gpu", 20.0), ("mlx-split", 9.0)]),
        report("tandem-cpu-compiled", &[("mlx-cpu", 5.0)]),
        report("tfjs-wasm", &[("mlx-cpu", 6.0)]),
        report("tfjs-wasm-2t", &[("mlx-cpu", 4.0)]),
        report("webgpu-hand", &[("mlx-gpu", 1.0)]),
    ];
    let (what, r) = best_modes(&reports, "MLX example", &MLX_MODES).unwrap();
    assert!(what.contains("(tandem-cpu-compiled mlx-cpu)"), "{what}");
    assert_eq!(r.peer, "tfjs-wasm-2t mlx-cpu");
    assert_eq!(r.ratio, 0.8);
    assert_eq!(best_modes(&reports[2..], "MLX example", &MLX_MODES), None);
}

#[test]
fn a_model_workloads_best_modes_line_names_the_runtimes() {
    let reports = [
        report("tandem-gpu", &[("cnn", 300.0)]),
        report("tandem-cpu", &[("cnn", 18.0)]),
        report("tfjs-wasm", &[("cnn", 19.0)]),
        report("tfjs-wasm-2t", &[("cnn", 12.0)]),
    ];
    let (what, r) = best_modes(&reports, "CNN", &["cnn"]).unwrap();
    assert!(
        what.starts_with("CNN: tandem's best mode (tandem-cpu)"),
        "{what}"
    );
    assert_eq!((r.peer.as_str(), r.ratio), ("tfjs-wasm-2t", 12.0 / 18.0));
}

#[test]
fn ratios_take_the_fastest_peer_of_the_same_kind() {
    let workloads = select(&catalog(), Some(&["exp-1m".into(), "matmul-256".into()])).unwrap();
    let mut failed = report("jax-jit", &[("exp-1m", 1.0)]);
    failed
        .results
        .insert("exp-1m".into(), json!({"status": "failed", "median": 1.0}));
    let reports = [
        report("tandem-gpu", &[("exp-1m", 10.0), ("matmul-256", 4.0)]),
        report("tandem-cpu", &[("exp-1m", 2.0)]),
        report("tfjs-webgpu", &[("exp-1m", 20.0), ("matmul-256", 16.0)]),
        report("jax-webgpu", &[("exp-1m", 5.0)]),
        report("tfjs-wasm", &[("exp-1m", 4.0)]),
        failed,
    ];
    let r = Ratios::compute(&workloads, &reports);
    let exp = r.gpu.iter().find(|x| x.workload == "exp-1m").unwrap();
    assert_eq!((exp.peer.as_str(), exp.ratio), ("jax-webgpu", 0.5));
    assert_eq!(
        r.gpu
            .iter()
            .find(|x| x.workload == "matmul-256")
            .unwrap()
            .ratio,
        4.0
    );
    assert_eq!(r.cpu.len(), 1);
    assert_eq!(r.cpu[0].ratio, 2.0);
    assert!((geomean(&r.gpu).unwrap() - 2f64.sqrt()).abs() < 1e-12);
    assert!(r.text(&workloads).contains("geometric mean"));
}

#[test]
fn cells_show_status_words_and_figures() {
    assert_eq!(cell(None)[0], "-");
    assert_eq!(
        cell(Some(&json!({"status": "error", "error": "boom"})))[0],
        "err"
    );
    assert_eq!(cell(Some(&json!({"status": "n/a"})))[0], "n/a");
    assert_eq!(cell(Some(&json!({"status": "failed"})))[0], "FAIL");
    let ok = json!({"status": "ok", "median": 12.345, "min": 11.0, "max": 1234.5,
                    "derived": {"unit": "GB/s", "median": 0.5}});
    assert_eq!(
        cell(Some(&ok)),
        [
            "12.35".to_string(),
            "11.00-1234".to_string(),
            "0.500".to_string()
        ]
    );
}

#[test]
fn cuts_messages_to_one_short_line() {
    assert_eq!(first_line("a\nb"), "a");
    assert_eq!(first_line(&"x".repeat(300)).chars().count(), 201);
}

#[test]
fn recognizes_a_dead_browser() {
    assert!(browser_gone(
        "\"unknown error\": session deleted because of page crash"
    ));
    assert!(browser_gone(
        "\"invalid session id\": \"invalid session id\""
    ));
    assert!(!browser_gone("\"script timeout\": \"script timeout\""));
}

#[test]
fn formats_utc_dates() {
    assert_eq!(utc_from_unix(0), "1970-01-01T00:00:00Z");
    assert_eq!(utc_from_unix(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(utc_from_unix(1_795_000_000), "2026-11-18T11:06:40Z");
}
