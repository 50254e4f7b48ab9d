//! `--rounds N`: every runtime's page N times, the runtimes' order reversed each round, and
//! each workload's timed runs pooled. One round runs the runtimes one after another, so a
//! machine that slows down over a few minutes (2 shared cores here) favours whichever ran
//! first; alternating the order puts each runtime early and late.

use std::collections::BTreeMap;

use serde_json::Value;

use super::drive::Report;
use super::plan::Runtime;

/// The runtimes in the order round `round` (from 0) runs them: as given, then reversed.
pub(super) fn order<'a>(round: usize, runtimes: &[&'a Runtime]) -> Vec<&'a Runtime> {
    let mut order = runtimes.to_vec();
    if round % 2 == 1 {
        order.reverse();
    }
    order
}

/// One report per runtime (in `runtimes`' order) from every round's reports.
pub(super) fn merge(runtimes: &[&'static Runtime], rounds: Vec<Vec<Report>>) -> Vec<Report> {
    let mut by_runtime: BTreeMap<&str, Vec<Report>> = BTreeMap::new();
    for report in rounds.into_iter().flatten() {
        by_runtime
            .entry(report.runtime.id)
            .or_default()
            .push(report);
    }
    runtimes
        .iter()
        .filter_map(|r| by_runtime.remove(r.id))
        .map(merge_runtime)
        .collect()
}

fn merge_runtime(reports: Vec<Report>) -> Report {
    let mut reports = reports.into_iter();
    let mut merged = reports.next().expect("a runtime ran at least one round");
    for report in reports {
        merged.wall += report.wall;
        for (id, result) in report.results {
            let pooled = match merged.results.remove(&id) {
                Some(first) => pool(first, &result),
                None => result,
            };
            merged.results.insert(id, pooled);
        }
    }
    merged
}

/// Two rounds' results of one workload: the timed runs of both if both passed, else the
/// first that did not (a failure in any round stands).
pub(super) fn pool(first: Value, other: &Value) -> Value {
    if first["status"] != "ok" {
        return first;
    }
    if other["status"] != "ok" {
        return other.clone();
    }
    let times = |r: &Value| -> Vec<f64> {
        r["times"]
            .as_array()
            .map(|t| t.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    let mut all = times(&first);
    all.extend(times(other));
    if all.is_empty() {
        return first;
    }
    let old_median = first["median"].as_f64().unwrap_or(f64::NAN);
    let mut pooled = first.clone();
    let mut sorted = all.clone();
    sorted.sort_by(f64::total_cmp);
    let median = median_of(&sorted);
    pooled["times"] = all.into();
    pooled["median"] = median.into();
    pooled["min"] = sorted[0].into();
    pooled["max"] = sorted[sorted.len() - 1].into();
    pooled["runs"] = (sorted.len() as u64).into();
    let sum = |key: &str| first[key].as_f64().unwrap_or(0.0) + other[key].as_f64().unwrap_or(0.0);
    pooled["warmup"] = sum("warmup").into();
    let longest = [&first, other]
        .iter()
        .filter_map(|r| r["longestTaskMs"].as_f64())
        .reduce(f64::max);
    pooled["longestTaskMs"] = longest.into();
    rescale_derived(&mut pooled["derived"], old_median, median);
    pooled
}

fn median_of(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The derived figure at the pooled median: a rate (GB/s, GFLOP/s) goes as 1 / ms, a time
/// per op (µs/op) as ms.
fn rescale_derived(derived: &mut Value, old_ms: f64, new_ms: f64) {
    let Some(value) = derived["median"].as_f64() else {
        return;
    };
    if !(old_ms > 0.0 && new_ms > 0.0) {
        return;
    }
    let per_op = derived["unit"] == "µs/op";
    let scaled = if per_op {
        value * new_ms / old_ms
    } else {
        value * old_ms / new_ms
    };
    derived["median"] = scaled.into();
}
