//! The nvidia-smi view of the device: the fields of `nvidia-smi --query-gpu` and their CSV text
//! in nvidia-smi's layout. The utilizations come from the busy spans of `observe::busy`.

use crate::error::{Error, Result};

/// A field of `nvidia-smi --query-gpu`, by its name there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Timestamp,
    Name,
    DriverVersion,
    PciBusId,
    Pstate,
    PcieLinkGenMax,
    PcieLinkGenCurrent,
    TemperatureGpu,
    UtilizationGpu,
    UtilizationMemory,
    MemoryTotal,
    MemoryUsed,
    MemoryFree,
}

/// Every field, in the order `smi()` lists them.
pub const FIELDS: [Field; 13] = [
    Field::Timestamp,
    Field::Name,
    Field::DriverVersion,
    Field::PciBusId,
    Field::Pstate,
    Field::PcieLinkGenMax,
    Field::PcieLinkGenCurrent,
    Field::TemperatureGpu,
    Field::UtilizationGpu,
    Field::UtilizationMemory,
    Field::MemoryTotal,
    Field::MemoryUsed,
    Field::MemoryFree,
];

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Timestamp => "timestamp",
            Field::Name => "name",
            Field::DriverVersion => "driver_version",
            Field::PciBusId => "pci.bus_id",
            Field::Pstate => "pstate",
            Field::PcieLinkGenMax => "pcie.link.gen.max",
            Field::PcieLinkGenCurrent => "pcie.link.gen.current",
            Field::TemperatureGpu => "temperature.gpu",
            Field::UtilizationGpu => "utilization.gpu",
            Field::UtilizationMemory => "utilization.memory",
            Field::MemoryTotal => "memory.total",
            Field::MemoryUsed => "memory.used",
            Field::MemoryFree => "memory.free",
        }
    }

    /// The unit nvidia-smi prints after the value and in the header, if any.
    pub fn unit(self) -> Option<&'static str> {
        match self {
            Field::UtilizationGpu | Field::UtilizationMemory => Some("%"),
            Field::MemoryTotal | Field::MemoryUsed | Field::MemoryFree => Some("MiB"),
            _ => None,
        }
    }

    /// The field of this name, as `--query-gpu` spells it.
    pub fn parse(name: &str) -> Option<Field> {
        FIELDS.into_iter().find(|f| f.name() == name)
    }
}

/// A field's value: text, a whole number in the field's unit, or `[N/A]`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Number(u64),
    NotAvailable,
}

/// What one sample knows, gathered by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// `"YYYY/MM/DD HH:MM:SS.mmm"`, local time.
    pub timestamp: String,
    pub name: String,
    /// The driver's version, where the platform reports it.
    pub driver_version: Option<String>,
    /// Busy fractions over the sample period; `None` without a GPU.
    pub utilization_gpu: Option<f64>,
    pub utilization_memory: Option<f64>,
    pub total_bytes: u64,
    /// Reserved bytes on the GPU (live and cached), as a driver sees them used.
    pub used_bytes: u64,
}

const MIB: u64 = 1 << 20;

impl Sample {
    pub fn value(&self, field: Field) -> Value {
        let percent = |f: Option<f64>| {
            f.map_or(Value::NotAvailable, |f| {
                Value::Number((f * 100.0).round() as u64)
            })
        };
        match field {
            Field::Timestamp => Value::Text(self.timestamp.clone()),
            Field::Name => Value::Text(self.name.clone()),
            Field::DriverVersion => self
                .driver_version
                .clone()
                .map_or(Value::NotAvailable, Value::Text),
            Field::PciBusId
            | Field::Pstate
            | Field::PcieLinkGenMax
            | Field::PcieLinkGenCurrent
            | Field::TemperatureGpu => Value::NotAvailable,
            Field::UtilizationGpu => percent(self.utilization_gpu),
            Field::UtilizationMemory => percent(self.utilization_memory),
            Field::MemoryTotal => Value::Number(self.total_bytes / MIB),
            Field::MemoryUsed => Value::Number(self.used_bytes.div_ceil(MIB)),
            Field::MemoryFree => {
                Value::Number(self.total_bytes.saturating_sub(self.used_bytes) / MIB)
            }
        }
    }
}

/// The fields of a `--query-gpu` list such as `"name,memory.used"`; an unknown one is a
/// `ValueError` that says so, as nvidia-smi does.
pub fn parse_query(query: &str) -> Result<Vec<Field>> {
    let fields: Vec<&str> = query.split(',').map(str::trim).collect();
    fields
        .iter()
        .map(|name| {
            Field::parse(name).ok_or_else(|| {
                let known: Vec<&str> = FIELDS.iter().map(|f| f.name()).collect();
                Error::Value(format!(
                    "smi: field \"{name}\" is not a valid field to query; the fields are {}",
                    known.join(", ")
                ))
            })
        })
        .collect()
}

/// nvidia-smi's `--format`: `csv`, optionally with `noheader` and `nounits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub header: bool,
    pub units: bool,
}

impl Format {
    /// `"csv"`, `"csv,noheader"`, `"csv,nounits"` or `"csv,noheader,nounits"` (in any order
    /// after `csv`).
    pub fn parse(text: &str) -> Result<Format> {
        let mut parts = text.split(',').map(str::trim);
        let mut format = Format {
            header: true,
            units: true,
        };
        if parts.next() != Some("csv") {
            return Err(bad_format(text));
        }
        for part in parts {
            match part {
                "noheader" => format.header = false,
                "nounits" => format.units = false,
                _ => return Err(bad_format(text)),
            }
        }
        Ok(format)
    }
}

fn bad_format(text: &str) -> Error {
    Error::Value(format!(
        "smi: format must be \"csv\", \"csv,noheader\", \"csv,nounits\" or \"csv,noheader,nounits\", got \"{text}\""
    ))
}

/// The text nvidia-smi prints for `fields` of `sample` in `format`: a header line (the field
/// names, with units in brackets even under `nounits`, as nvidia-smi does) and a value line,
/// columns joined by `", "`, each line ending in a newline.
pub fn csv(fields: &[Field], sample: &Sample, format: Format) -> String {
    let mut text = String::new();
    if format.header {
        let names: Vec<String> = fields
            .iter()
            .map(|f| match f.unit() {
                Some(unit) => format!("{} [{unit}]", f.name()),
                None => f.name().to_string(),
            })
            .collect();
        text.push_str(&names.join(", "));
        text.push('\n');
    }
    let values: Vec<String> = fields
        .iter()
        .map(|&f| match (sample.value(f), f.unit()) {
            (Value::Text(t), _) => t,
            (Value::Number(n), Some(unit)) if format.units => format!("{n} {unit}"),
            (Value::Number(n), _) => n.to_string(),
            (Value::NotAvailable, _) => "[N/A]".to_string(),
        })
        .collect();
    text.push_str(&values.join(", "));
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Sample {
        Sample {
            timestamp: "2026/11/25 10:00:00.123".into(),
            name: "SwiftShader Device (Subzero)".into(),
            driver_version: None,
            utilization_gpu: Some(0.374),
            utilization_memory: Some(0.0),
            total_bytes: 4096 * MIB,
            used_bytes: 3 * MIB + 1,
        }
    }

    #[test]
    fn csv_matches_nvidia_smis_layout_in_every_format() {
        let fields = parse_query("name,memory.used,memory.total,utilization.gpu,pstate").unwrap();
        let s = sample();
        let full = csv(&fields, &s, Format::parse("csv").unwrap());
        assert_eq!(
            full,
            "name, memory.used [MiB], memory.total [MiB], utilization.gpu [%], pstate\n\
             SwiftShader Device (Subzero), 4 MiB, 4096 MiB, 37 %, [N/A]\n"
        );
        let bare = csv(&fields, &s, Format::parse("csv,noheader,nounits").unwrap());
        assert_eq!(bare, "SwiftShader Device (Subzero), 4, 4096, 37, [N/A]\n");
        let nounits = csv(&fields, &s, Format::parse("csv, nounits").unwrap());
        assert!(nounits.starts_with("name, memory.used [MiB],"));
        assert!(nounits.ends_with("\nSwiftShader Device (Subzero), 4, 4096, 37, [N/A]\n"));
        assert!(parse_query("name,gpu.power").is_err());
        assert!(Format::parse("json").is_err());
        assert!(Format::parse("csv,noheaders").is_err());
    }
}
