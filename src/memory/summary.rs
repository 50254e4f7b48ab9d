//! `memorySummary()`: the statistics as a table in the style of
//! `torch.cuda.memory_summary()`.

use crate::memory::stats::{Metric, Scope, Stats};

const WIDTH: usize = 75;

/// The table for `stats`, with the limits it ran under.
pub fn summary(stats: &Stats, memory_limit: Option<u64>, cache_limit: u64) -> String {
    let mut out = Vec::new();
    let rule = |c: char| format!("|{}|", c.to_string().repeat(WIDTH));
    out.push(rule('='));
    out.push(centered("tandem memory summary"));
    out.push(rule('-'));
    out.push(centered(&format!(
        "OOMs: {}   allocation retries: {}   cache hits: {}   misses: {}",
        stats.num_ooms, stats.num_alloc_retries, stats.num_cache_hits, stats.num_cache_misses
    )));
    out.push(centered(&format!(
        "memory limit: {}   cache limit: {}",
        memory_limit.map_or("none".to_string(), format_bytes),
        format_bytes(cache_limit)
    )));
    out.push(rule('='));
    out.push(format!(
        "| {:<21} | {:>10} | {:>10} | {:>10} | {:>10} |",
        "Metric", "Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"
    ));
    // PyTorch's sections and names; "non-releasable" is the inactive split memory.
    let sections: [(&str, &Metric, bool); 9] = [
        ("Allocated memory", &stats.allocated_bytes, true),
        ("Active memory", &stats.active_bytes, true),
        ("Requested memory", &stats.requested_bytes, true),
        ("Reserved memory", &stats.reserved_bytes, true),
        ("Non-releasable memory", &stats.inactive_split_bytes, true),
        ("Allocations", &stats.allocation, false),
        ("Active allocs", &stats.active, false),
        ("Reserved segments", &stats.segment, false),
        ("Non-releasable allocs", &stats.inactive_split, false),
    ];
    for (name, metric, bytes) in sections {
        out.push(rule('-'));
        for scope in Scope::ALL {
            let label = match scope {
                Scope::All => name.to_string(),
                Scope::LargePool => "      from large pool".into(),
                Scope::SmallPool => "      from small pool".into(),
                Scope::Cpu => "      on cpu".into(),
                Scope::Gpu => "      on gpu".into(),
            };
            let gauge = metric.get(scope);
            let cell = |v: u64| {
                if bytes {
                    format_bytes(v)
                } else {
                    v.to_string()
                }
            };
            out.push(format!(
                "| {:<21} | {:>10} | {:>10} | {:>10} | {:>10} |",
                label,
                cell(gauge.current),
                cell(gauge.peak),
                cell(gauge.allocated),
                cell(gauge.freed)
            ));
        }
    }
    out.push(rule('-'));
    out.push(centered(&format!(
        "transfers: {} cpu to gpu, {} gpu to cpu",
        format_bytes(stats.cpu_to_gpu),
        format_bytes(stats.gpu_to_cpu)
    )));
    out.push(rule('='));
    out.join("\n") + "\n"
}

fn centered(text: &str) -> String {
    format!("|{text:^WIDTH$}|")
}

/// Bytes in whole units, with at most four digits before the unit (rounded down).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B ", "KiB", "MiB", "GiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 10 << 10 && unit < UNITS.len() - 1 {
        value >>= 10;
        unit += 1;
    }
    format!("{value} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_in_whole_units() {
        assert_eq!(format_bytes(512), "512 B ");
        assert_eq!(format_bytes(4 << 20), "4096 KiB");
        assert_eq!(format_bytes(3 << 30), "3072 MiB");
    }

    #[test]
    fn every_line_has_the_same_width() {
        let text = summary(&Stats::default(), Some(64 << 20), 1 << 30);
        let widths: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
        assert!(widths.iter().all(|&w| w == WIDTH + 2), "{text}");
        assert!(text.contains("Reserved segments"));
    }
}
