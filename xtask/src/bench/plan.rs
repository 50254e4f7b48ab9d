//! What `bench peers` runs: the runtimes, the plan of warm-ups and timed runs, the options,
//! and the workloads of `bench/peers/workloads.js`.

use std::path::Path;

use serde_json::Value;

/// The device a runtime computes on; ratios compare tandem with peers of the same kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Gpu,
    Cpu,
}

/// A column of the table: one runtime, driven in its own browser.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Runtime {
    pub(super) id: &'static str,
    pub(super) kind: Kind,
    /// Counts as a peer in the ratios (tandem itself and the hand-written limit do not).
    pub(super) peer: bool,
}

pub(super) const RUNTIMES: [Runtime; 11] = [
    Runtime {
        id: "tandem-gpu",
        kind: Kind::Gpu,
        peer: false,
    },
    // The CPU stream on one thread (the single-threaded build), beside tfjs-wasm.
    Runtime {
        id: "tandem-cpu",
        kind: Kind::Cpu,
        peer: false,
    },
    // The threaded build's CPU stream on this machine's 2 cores, beside tfjs-wasm-2t.
    Runtime {
        id: "tandem-cpu-2t",
        kind: Kind::Cpu,
        peer: false,
    },
    // The multi-op workloads through `compile`, beside jax-js's `jit`.
    Runtime {
        id: "tandem-gpu-compiled",
        kind: Kind::Gpu,
        peer: false,
    },
    Runtime {
        id: "tandem-cpu-compiled",
        kind: Kind::Cpu,
        peer: false,
    },
    Runtime {
        id: "tfjs-webgpu",
        kind: Kind::Gpu,
        peer: true,
    },
    Runtime {
        id: "tfjs-wasm",
        kind: Kind::Cpu,
        peer: true,
    },
    // Its threaded build on this machine's 2 cores: a peer's best CPU mode.
    Runtime {
        id: "tfjs-wasm-2t",
        kind: Kind::Cpu,
        peer: true,
    },
    Runtime {
        id: "jax-webgpu",
        kind: Kind::Gpu,
        peer: true,
    },
    Runtime {
        id: "jax-jit",
        kind: Kind::Gpu,
        peer: true,
    },
    Runtime {
        id: "webgpu-hand",
        kind: Kind::Gpu,
        peer: false,
    },
];

/// How many runs a workload gets: `warmup`, then at least `runs` timed runs, more up to
/// `max_runs` while the timed runs have taken less than `budget_ms` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) warmup: u32,
    pub(super) runs: u32,
    pub(super) max_runs: u32,
    pub(super) budget_ms: u32,
}

pub(super) const QUICK: Plan = Plan {
    warmup: 2,
    runs: 7,
    max_runs: 7,
    budget_ms: 0,
};
pub(super) const FULL: Plan = Plan {
    warmup: 2,
    runs: 11,
    max_runs: 31,
    budget_ms: 10_000,
};

impl Plan {
    pub(super) fn describe(&self) -> String {
        if self.runs == self.max_runs {
            format!("{} timed runs after {} warm-ups", self.runs, self.warmup)
        } else {
            format!(
                "{}-{} timed runs (more while under {} s) after {} warm-ups",
                self.runs,
                self.max_runs,
                self.budget_ms / 1000,
                self.warmup
            )
        }
    }
}

#[derive(Debug, PartialEq)]
pub(super) struct Options {
    pub(super) quick: bool,
    pub(super) only: Option<Vec<String>>,
    pub(super) runtimes: Vec<&'static Runtime>,
    /// Rounds over the runtimes, alternating their order (`--rounds`, from 1).
    pub(super) rounds: usize,
}

/// `[--quick] [--only IDS|GROUPS] [--runtimes IDS] [--rounds N]`, lists comma-separated.
pub(super) fn parse_args(args: &[&str]) -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        only: None,
        runtimes: RUNTIMES.iter().collect(),
        rounds: 1,
    };
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg, None),
        };
        let mut value = || {
            inline
                .or_else(|| rest.next().copied())
                .map(list)
                .ok_or_else(|| format!("{flag} needs a comma-separated list"))
        };
        match flag {
            "--quick" if inline.is_none() => options.quick = true,
            "--only" => options.only = Some(value()?),
            "--runtimes" => options.runtimes = runtimes_named(&value()?)?,
            "--rounds" => options.rounds = rounds(inline.or_else(|| rest.next().copied()))?,
            other => return Err(format!("bench peers: unknown option {other}")),
        }
    }
    Ok(options)
}

/// `--rounds N`'s N: a whole number from 1 to 20.
fn rounds(value: Option<&str>) -> Result<usize, String> {
    let value = value.ok_or("--rounds needs a number")?;
    match value.parse::<usize>() {
        Ok(n) if (1..=20).contains(&n) => Ok(n),
        _ => Err(format!(
            "--rounds needs a whole number from 1 to 20, not {value}"
        )),
    }
}

pub(super) fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

pub(super) fn runtimes_named(names: &[String]) -> Result<Vec<&'static Runtime>, String> {
    names
        .iter()
        .map(|name| {
            RUNTIMES.iter().find(|r| r.id == name).ok_or_else(|| {
                let ids: Vec<&str> = RUNTIMES.iter().map(|r| r.id).collect();
                format!("unknown runtime \"{name}\"; there are: {}", ids.join(", "))
            })
        })
        .collect()
}

/// A row of the table, from `bench/peers/workloads.json` (which the page reads too).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Workload {
    pub(super) id: String,
    pub(super) group: String,
    pub(super) title: String,
}

pub(super) fn load_catalog(path: &Path) -> Result<Vec<Workload>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_catalog(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub(super) fn parse_catalog(text: &str) -> Result<Vec<Workload>, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let entries = json["workloads"]
        .as_array()
        .ok_or("no \"workloads\" list")?;
    entries
        .iter()
        .map(|w| {
            let field = |key: &str| {
                w[key]
                    .as_str()
                    .map(String::from)
                    .ok_or_else(|| format!("a workload lacks \"{key}\": {w}"))
            };
            Ok(Workload {
                id: field("id")?,
                group: field("group")?,
                title: field("title")?,
            })
        })
        .collect()
}

/// The workloads `--only` names, by id or by group, in catalog order; all without `--only`.
pub(super) fn select(
    catalog: &[Workload],
    only: Option<&[String]>,
) -> Result<Vec<Workload>, String> {
    let Some(names) = only else {
        return Ok(catalog.to_vec());
    };
    let matches = |w: &Workload, name: &str| w.id == name || w.group == name;
    if let Some(unknown) = names
        .iter()
        .find(|n| !catalog.iter().any(|w| matches(w, n)))
    {
        let mut groups: Vec<&str> = catalog.iter().map(|w| w.group.as_str()).collect();
        groups.dedup();
        let ids: Vec<&str> = catalog.iter().map(|w| w.id.as_str()).collect();
        return Err(format!(
            "unknown workload \"{unknown}\"; groups: {}; ids: {}",
            groups.join(", "),
            ids.join(", ")
        ));
    }
    Ok(catalog
        .iter()
        .filter(|w| names.iter().any(|n| matches(w, n)))
        .cloned()
        .collect())
}
