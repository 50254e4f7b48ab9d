//! When the start-up choices are made: the matmul kernel at the first GPU matmul (or from an
//! earlier page load), and what is kept for the next load. A page that never multiplies
//! matrices on the GPU never times a matmul kernel, and a later visit times nothing.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_util::lock::Mutex;

use crate::array::{Array, lazy_order};
use crate::gpu::GpuContext;
use crate::gpu::matmul::MatmulKernel;
use crate::graph::primitive::Primitive;
use crate::scheduler::Scheduler;
use crate::startup::matmul_tuning::{MatmulTuning, tune_matmul};
use crate::startup::remembered::{Choices, Source};
use crate::stream::Device;

/// Keeps an adapter's encoded [`Choices`] under its storage key.
pub type Keep = dyn Fn(&str, &str);

/// Called with an adapter's storage key and its encoded [`Choices`] after a measurement.
#[derive(Clone)]
pub struct Remember(pub Rc<Keep>);

impl std::fmt::Debug for Remember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Remember")
    }
}

/// The runtime's start-up choices as they are made.
#[derive(Debug)]
pub struct Startup {
    /// The adapter's storage key, when there is a GPU.
    key: Option<String>,
    remember: Option<Remember>,
    /// The matmul kernel; `None` until the first GPU matmul needs it.
    matmul: RefCell<Option<MatmulTuning>>,
    /// Where the default device came from.
    pub default_source: Cell<Source>,
    /// The default device, once measured or remembered (what is kept of it).
    pub default_device: Cell<Option<Device>>,
    /// Held while the matmul kernel is timed, so that concurrent calls wait for one choice.
    tuning: Mutex<()>,
}

impl Startup {
    pub fn new(key: Option<String>, remember: Option<Remember>) -> Startup {
        Startup {
            key,
            remember,
            matmul: RefCell::new(None),
            default_source: Cell::new(Source::Given),
            default_device: Cell::new(None),
            tuning: Mutex::new(()),
        }
    }

    /// Whether the matmul kernel is still to choose and some GPU matmul may need it.
    pub fn matmul_pending(&self) -> bool {
        self.matmul.borrow().is_none() && crate::array::gpu_matmul_made()
    }

    /// The matmul choice so far.
    pub fn matmul(&self) -> Option<MatmulTuning> {
        self.matmul.borrow().clone()
    }

    /// Uses a kernel an earlier page load chose.
    pub fn use_remembered_matmul(&self, gpu: &GpuContext, kernel: MatmulKernel) {
        gpu.choices.matmul.set(kernel);
        *self.matmul.borrow_mut() = Some(MatmulTuning {
            kernel,
            timings: Vec::new(),
            reason: "chosen by measurement on an earlier page load on this adapter".into(),
            source: Source::Remembered,
        });
    }

    /// Before `arrays` run: if they hold the first GPU matmul, times the candidates on a
    /// product of its shape (clamped) and keeps the choice.
    pub async fn settle_matmul(&self, scheduler: &Scheduler, gpu: &GpuContext, arrays: &[Array]) {
        if !self.matmul_pending() {
            return;
        }
        let Some(shape) = first_gpu_matmul(arrays) else {
            return;
        };
        let _turn = self.tuning.lock().await;
        if !self.matmul_pending() {
            return;
        }
        let tuning = tune_matmul(scheduler, gpu, shape).await;
        *self.matmul.borrow_mut() = Some(tuning);
        self.save(gpu);
    }

    /// Hands what has been measured or remembered to the page's store.
    pub fn save(&self, gpu: &GpuContext) {
        let (Some(key), Some(remember)) = (&self.key, &self.remember) else {
            return;
        };
        let matmul = self.matmul.borrow();
        let choices = Choices {
            matmul: matmul
                .as_ref()
                .filter(|t| t.source != Source::Given)
                .map(|t| t.kernel),
            builtin_exp: gpu.choices.exp.known.then_some(gpu.choices.exp.builtin),
            default_device: self.default_device.get(),
        };
        (remember.0)(key, &choices.encode());
    }
}

/// `(m, k, n)` of the first lazy GPU matmul behind `arrays` (with or without an epilogue).
fn first_gpu_matmul(arrays: &[Array]) -> Option<(usize, usize, usize)> {
    lazy_order(arrays).into_iter().find_map(|node| {
        let matmul = matches!(
            node.primitive(),
            Some(Primitive::Matmul | Primitive::MatmulThen(_))
        );
        if node.device() != Device::Gpu || !matmul {
            return None;
        }
        let a = node.inputs().first()?.shape().to_vec();
        let n = node.shape().last().copied()?;
        let (m, k) = (a[a.len() - 2], a[a.len() - 1]);
        Some((m, k, n))
    })
}
