//! Start-up choices kept between page loads: the matmul kernel, whether the built-in `exp`
//! passed its probe, and the default device of a fallback adapter. They are kept per adapter
//! and tandem version (a new version may change kernels), as short text, so that the JS layer
//! can store them in the browser (IndexedDB) and a later visit measures nothing.

use crate::gpu::AdapterSummary;
use crate::gpu::matmul::MatmulKernel;
use crate::stream::Device;

/// The choices for one adapter; `None` for what has not been measured yet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Choices {
    pub matmul: Option<MatmulKernel>,
    pub builtin_exp: Option<bool>,
    pub default_device: Option<Device>,
}

/// Where a start-up choice came from, for `RuntimeInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Measured by this runtime.
    Measured,
    /// Kept from an earlier page load on this adapter and version.
    Remembered,
    /// Not needed yet (the matmul kernel is chosen at the first GPU matmul).
    Pending,
    /// Set by the page (`initRuntime({defaultDevice})`), or decided without measuring.
    Given,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Measured => "measured",
            Source::Remembered => "remembered",
            Source::Pending => "not yet needed",
            Source::Given => "given",
        }
    }
}

/// The storage key of an adapter's choices. The CPU's threads are part of it: on a fallback
/// adapter the default device is the faster of the CPU stream and the GPU, and the CPU stream
/// on a pool of threads (the threaded build) is not the one on one.
pub fn key(adapter: &AdapterSummary) -> String {
    format!(
        "tandem {}|{}|{}|{}|{}|{}|cpu threads {}",
        env!("CARGO_PKG_VERSION"),
        adapter.backend,
        adapter.vendor,
        adapter.architecture,
        adapter.device,
        adapter.description,
        crate::cpu::pool::threads()
    )
}

impl Choices {
    /// `matmul=registers 8x4;exp=builtin;device=cpu`, the parts that are known.
    pub fn encode(&self) -> String {
        let mut parts = Vec::new();
        if let Some(kernel) = self.matmul {
            parts.push(format!("matmul={}", kernel.name()));
        }
        if let Some(builtin) = self.builtin_exp {
            parts.push(format!(
                "exp={}",
                if builtin { "builtin" } else { "accurate" }
            ));
        }
        if let Some(device) = self.default_device {
            parts.push(format!("device={}", device.name()));
        }
        parts.join(";")
    }

    /// The choices in `text`; parts it does not recognize (another version's) are ignored.
    pub fn decode(text: &str) -> Choices {
        let mut choices = Choices::default();
        for part in text.split(';') {
            let Some((name, value)) = part.split_once('=') else {
                continue;
            };
            match name {
                "matmul" => {
                    choices.matmul = MatmulKernel::CANDIDATES
                        .into_iter()
                        .find(|k| k.name() == value);
                }
                "exp" => {
                    choices.builtin_exp = match value {
                        "builtin" => Some(true),
                        "accurate" => Some(false),
                        _ => None,
                    };
                }
                "device" => choices.default_device = Device::parse(value).ok(),
                _ => {}
            }
        }
        choices
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_survive_their_text_and_unknown_parts_are_ignored() {
        let choices = Choices {
            matmul: Some(MatmulKernel::CANDIDATES[2]),
            builtin_exp: Some(false),
            default_device: Some(Device::Cpu),
        };
        assert_eq!(Choices::decode(&choices.encode()), choices);
        assert_eq!(Choices::decode(""), Choices::default());
        let odd = Choices::decode("matmul=registers 99x1;exp=maybe;device=tpu;x=1;junk");
        assert_eq!(odd, Choices::default());
    }
}
