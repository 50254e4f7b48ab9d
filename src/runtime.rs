//! The runtime: the GPU context when WebGPU (or Vulkan, natively) is available, and the device
//! that ops use when they name none. A page has one runtime per JS realm (page or worker).

use std::rc::Rc;

use crate::array::Array;
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::gpu::device::choices::ExpChoice;
use crate::gpu::{AdapterSummary, GpuContext};
use crate::memory::allocator;
use crate::observe::profile::Profiler;
use crate::scheduler::Scheduler;
use crate::startup::calibrate::calibrate;
use crate::startup::matmul_tuning::MatmulTuning;
use crate::startup::remembered::{self, Choices, Source};
use crate::startup::settle::{Remember, Startup};
use crate::storage::HostWords;
use crate::stream::Device;

/// How to start the runtime.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Passed to the adapter request.
    pub power_preference: wgpu::PowerPreference,
    /// Fail instead of running the `gpu` device on the CPU when no adapter is found.
    pub require_gpu: bool,
    /// The device ops use when they name none. Without it the runtime chooses: the GPU on a
    /// hardware adapter, the faster device by measurement on a fallback adapter.
    pub default_device: Option<Device>,
    /// The budget for active memory, in bytes (see `memory::allocator`).
    pub memory_limit: Option<u64>,
    /// The bound on cached bytes; `Some(0)` disables the cache.
    pub cache_limit: Option<u64>,
    /// Start-up choices of earlier page loads: (storage key, encoded choices) pairs, from
    /// which the runtime takes its adapter's (see `startup::remembered`).
    pub remembered: Vec<(String, String)>,
    /// Called with the adapter's key and choices whenever the runtime measures one.
    pub remember: Option<Remember>,
}

/// What the runtime found, reported to JS by `initRuntime`.
#[derive(Debug, Clone)]
pub struct RuntimeInfo {
    /// Whether a GPU adapter and device were obtained.
    pub gpu: bool,
    /// The adapter, when there is one.
    pub adapter: Option<AdapterSummary>,
    /// Device limits by their WebGPU names.
    pub limits: Vec<(&'static str, u64)>,
    /// WebGPU feature names the device has.
    pub features: Vec<&'static str>,
    /// The device ops use when they name none.
    pub default_device: Device,
    /// Why that device was chosen.
    pub default_device_reason: String,
    /// Which `exp` the GPU kernels use, when there is a GPU.
    pub exp: Option<ExpChoice>,
    /// Which matmul kernel the GPU uses, once the first GPU matmul (or an earlier page load)
    /// chose it.
    pub matmul: Option<MatmulTuning>,
    /// Where the default device came from.
    pub default_device_source: Source,
    /// What each start-up step took, in milliseconds.
    pub startup_ms: Vec<(&'static str, f64)>,
}

/// The start-up measurements (the matmul tuning, the device calibration) are the runtime's own
/// work: their buffers leave the cache and the peaks restart, so that a page's cache and peak
/// figures start from what the page did. (The totals keep counting them, as PyTorch's do.)
fn forget_start_up_work() {
    allocator::clear_cache();
    allocator::reset_peak_stats();
}

/// The runtime that evaluates arrays.
#[derive(Debug)]
pub struct Runtime {
    gpu: Option<Rc<GpuContext>>,
    info: RuntimeInfo,
    /// Records evaluations while a profile runs.
    pub profiler: Rc<Profiler>,
    /// The one scheduler every evaluation and read goes through.
    scheduler: Scheduler,
    startup: Startup,
}

impl Runtime {
    /// Requests an adapter and device. Without one, the runtime still works and runs the `gpu`
    /// device's ops on the CPU, unless `options.require_gpu` is set.
    pub async fn new(options: RuntimeOptions) -> Result<Runtime> {
        if let Some(limit) = options.memory_limit {
            allocator::set_memory_limit(Some(limit));
        }
        if let Some(limit) = options.cache_limit {
            allocator::set_cache_limit(limit);
        }
        let mut clock = crate::observe::clock::now_ms();
        let mut lap = move || {
            let now = crate::observe::clock::now_ms();
            now - std::mem::replace(&mut clock, now)
        };
        let known = |adapter: &crate::gpu::AdapterSummary| {
            let key = remembered::key(adapter);
            let found = options.remembered.iter().find(|(k, _)| *k == key);
            found.map_or_else(Choices::default, |(_, text)| Choices::decode(text))
        };
        let decide_exp = async |adapter: &_, device: &_, queue: &_| {
            crate::startup::exp_probe::decide(known(adapter).builtin_exp, device, queue).await
        };
        match GpuContext::new(options.power_preference, decide_exp).await {
            Ok(gpu) => {
                let device_ms = lap();
                let probe_ms = gpu.choices.exp.ms;
                let choices = known(gpu.adapter());
                let startup = Startup::new(Some(remembered::key(gpu.adapter())), options.remember);
                let mut runtime = Runtime::with_gpu(gpu, startup);
                runtime
                    .info
                    .startup_ms
                    .push(("device", device_ms - probe_ms));
                runtime.info.startup_ms.push(("exp probe", probe_ms));
                if let (Some(gpu), Some(kernel)) = (&runtime.gpu, choices.matmul) {
                    runtime.startup.use_remembered_matmul(gpu, kernel);
                }
                match (options.default_device, choices.default_device) {
                    (Some(device), _) => {
                        runtime.set_default_device(device, "initRuntime asked for it")
                    }
                    (None, Some(device)) if runtime.is_fallback() => {
                        let why = "the faster device by measurement on an earlier page load on \
                                   this software (fallback) adapter";
                        runtime.set_default_device(device, why);
                        runtime.startup.default_source.set(Source::Remembered);
                        runtime.startup.default_device.set(Some(device));
                    }
                    (None, _) => runtime.choose_default_device().await,
                }
                runtime.info.startup_ms.push(("default device", lap()));
                if let Some(gpu) = &runtime.gpu {
                    runtime.startup.save(gpu);
                }
                forget_start_up_work();
                Ok(runtime)
            }
            Err(err) if options.require_gpu => Err(Error::Device(format!(
                "initRuntime: requireGpu is set but {}",
                err.message()
            ))),
            Err(err) => {
                let mut runtime = Runtime::cpu_only(err.message());
                if let Some(device) = options.default_device {
                    runtime.set_default_device(device, "initRuntime asked for it");
                }
                Ok(runtime)
            }
        }
    }

    fn with_gpu(gpu: GpuContext, startup: Startup) -> Runtime {
        let adapter = gpu.adapter().clone();
        let info = RuntimeInfo {
            gpu: true,
            limits: gpu.limit_table(),
            features: gpu.feature_names(),
            default_device: Device::Gpu,
            // A fallback adapter's default is measured later (choose_default_device).
            default_device_reason: format!("a GPU adapter is available ({})", adapter.device),
            exp: Some(gpu.choices.exp.clone()),
            matmul: None,
            default_device_source: Source::Given,
            startup_ms: Vec::new(),
            adapter: Some(adapter),
        };
        Runtime::assemble(Some(Rc::new(gpu)), info, startup)
    }

    fn set_default_device(&mut self, device: Device, why: &str) {
        self.info.default_device = device;
        self.info.default_device_reason = why.into();
    }

    fn is_fallback(&self) -> bool {
        self.info
            .adapter
            .as_ref()
            .is_some_and(|a| a.is_fallback_adapter)
    }

    /// Chooses the matmul kernel if `arrays` hold the first GPU matmul (see
    /// `startup::settle`).
    async fn settle(&self, arrays: &[Array]) {
        let Some(gpu) = &self.gpu else { return };
        if !self.startup.matmul_pending() {
            return;
        }
        // The timing is the runtime's own work, not the page's: a profile leaves it out.
        let profiling = self.profiler.pause();
        self.startup
            .settle_matmul(&self.scheduler, gpu, arrays)
            .await;
        self.profiler.resume(profiling);
    }

    /// On a fallback adapter, makes the device that runs a probe faster the default.
    async fn choose_default_device(&mut self) {
        let Some(adapter) = self.info.adapter.clone() else {
            return;
        };
        if !adapter.is_fallback_adapter {
            return;
        }
        match calibrate(&self.scheduler).await {
            Ok(calibration) => {
                self.set_default_device(calibration.faster(), &calibration.reason(&adapter.device));
                self.startup.default_source.set(Source::Measured);
                self.startup.default_device.set(Some(calibration.faster()));
            }
            Err(err) => {
                self.info.default_device_reason = format!(
                    "{} is a software (fallback) adapter; timing the devices failed ({}), so \
                     the gpu stays the default",
                    adapter.device,
                    err.message()
                );
            }
        }
    }

    fn cpu_only(why: &str) -> Runtime {
        let info = RuntimeInfo {
            gpu: false,
            adapter: None,
            limits: Vec::new(),
            features: Vec::new(),
            default_device: Device::Cpu,
            default_device_reason: format!("no GPU: {why}; the gpu device runs on the CPU"),
            exp: None,
            matmul: None,
            default_device_source: Source::Given,
            startup_ms: Vec::new(),
        };
        Runtime::assemble(None, info, Startup::new(None, None))
    }

    fn assemble(gpu: Option<Rc<GpuContext>>, info: RuntimeInfo, startup: Startup) -> Runtime {
        let profiler = Rc::new(Profiler::default());
        Runtime {
            scheduler: Scheduler::new(gpu.clone(), profiler.clone()),
            gpu,
            info,
            profiler,
            startup,
        }
    }

    /// The GPU context, if a GPU was found.
    pub fn gpu(&self) -> Option<&GpuContext> {
        self.gpu.as_deref()
    }

    /// Evaluates `arrays` and every unevaluated node they depend on; resolves once their GPU
    /// work has finished. Calls may overlap: see [`crate::scheduler`].
    pub async fn evaluate(&self, arrays: &[Array]) -> Result<()> {
        self.settle(arrays).await;
        self.scheduler.evaluate(arrays).await
    }

    /// Stops the profile that [`Runtime::profiler`] records and reports it once every batch
    /// it saw has finished.
    pub async fn finish_profile(&self) -> Result<crate::observe::profile::Report> {
        self.profiler.stop();
        if let Some(gpu) = &self.gpu {
            crate::gpu::device::readback::wait_idle(gpu).await?;
        }
        self.profiler.finish().await
    }

    /// Moves an array made from data to `device` now rather than at its first use there:
    /// on the GPU, its buffer is written, the GPU's creation of it confirmed, and the host copy
    /// let go, so that a weights file streamed in holds one copy of each tensor. Without a
    /// GPU, or for the CPU, the data stays on the host.
    pub async fn place(&self, array: &Array, device: Device) -> Result<()> {
        let (Some(gpu), Device::Gpu) = (self.gpu(), device) else {
            return Ok(());
        };
        let Some(storage) = array.storage() else {
            return Ok(());
        };
        storage.ensure_gpu(|words| crate::gpu::device::buffers::upload_words(gpu, words))?;
        crate::memory::device_errors::verify().await?;
        storage.drop_copy(Device::Cpu);
        Ok(())
    }

    /// Resolves once all work started so far has finished, readbacks included.
    pub async fn synchronize(&self) -> Result<()> {
        self.scheduler.synchronize().await
    }

    /// Evaluates `arrays` and returns each one's storage words on the host, read back
    /// together.
    pub async fn read_storages(&self, arrays: &[Array]) -> Result<Vec<HostWords>> {
        self.settle(arrays).await;
        self.scheduler.read(arrays).await
    }

    /// Evaluates `array` and returns its elements' words, row-major.
    pub async fn read_words(&self, array: &Array) -> Result<HostWords> {
        self.settle(std::slice::from_ref(array)).await;
        self.scheduler.read_words(array).await
    }

    /// Evaluates `array` and returns its elements as `T`, which must match the dtype.
    ///
    /// ```
    /// # async fn f() -> tandem::Result<()> {
    /// let runtime = tandem::Runtime::new(Default::default()).await?;
    /// let a = tandem::Array::from_f32(&[1.0, 2.0], &[2])?;
    /// assert_eq!(runtime.read::<f32>(&a).await?, vec![1.0, 2.0]);
    /// assert!(runtime.read::<i32>(&a).await.is_err());
    /// # Ok(()) }
    /// ```
    pub async fn read<T: Element>(&self, array: &Array) -> Result<Vec<T>> {
        if array.dtype() != T::DTYPE {
            return Err(Error::DType(format!(
                "read: the array is {} but {} was asked for",
                array.dtype().name(),
                T::DTYPE.name()
            )));
        }
        let words = self.read_words(array).await?;
        Ok(bytemuck::cast_slice(&words).to_vec())
    }

    /// Evaluates a `float32` array and returns its elements.
    pub async fn read_f32(&self, array: &Array) -> Result<Vec<f32>> {
        self.read(array).await
    }

    /// Lets the GPU release the memory of buffers destroyed since the last submit (by a
    /// freed raw block, a cache trim or `clearCache`); evaluations do it themselves.
    pub fn release_destroyed(&self) {
        if let Some(gpu) = self.gpu() {
            gpu.release_destroyed();
        }
    }

    /// Why the GPU device was lost, if it was: the runtime then fails every call that needs
    /// the GPU, and a new runtime gets a new device.
    pub fn device_lost(&self) -> Option<String> {
        self.gpu.as_ref().and_then(|gpu| gpu.errors.lost_reason())
    }

    /// What the runtime found and chose so far (the matmul kernel once chosen).
    pub fn info(&self) -> RuntimeInfo {
        let mut info = self.info.clone();
        info.matmul = self.startup.matmul();
        info.default_device_source = self.startup.default_source.get();
        info
    }

    /// The device that ops use when they name none.
    pub fn default_device(&self) -> Device {
        self.info.default_device
    }
}

/// The most GPU dispatches one submit carries (a tuning knob for pages; see
/// `gpu::device::encoder`).
pub fn set_dispatches_per_submit(count: usize) {
    crate::gpu::device::encoder::set_dispatches_per_submit(count);
}

/// The most GPU dispatches one submit carries.
pub fn dispatches_per_submit() -> usize {
    crate::gpu::device::encoder::dispatches_per_submit()
}
