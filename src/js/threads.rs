//! The CPU pool in the page: how many threads the CPU stream's kernels use, and in the
//! threaded build (compiled with wasm atomics, loaded by the package on a cross-origin
//! isolated page) the Web Workers that run them (`pool_worker.js`) on the module's shared
//! memory. `RuntimeInfo.threads` says which build runs and why, so a page that asked for
//! threads it cannot have is told (not ignored in silence).

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::error::{Error, Result};
use crate::js::set_property as set;

/// The most threads a page may ask for.
const MOST: usize = 64;

/// What the page's pool is, for `RuntimeInfo.threads`.
#[derive(Clone, Debug)]
pub struct Threads {
    pub count: usize,
    pub threaded_build: bool,
    pub isolated: bool,
    pub reason: String,
}

thread_local! {
    static STARTED: RefCell<Option<Threads>> = const { RefCell::new(None) };
}

/// `initRuntime`'s `threads`: a whole number from 1 to 64.
pub fn parse(value: Option<f64>) -> Result<Option<usize>> {
    match value {
        None => Ok(None),
        Some(v) if v.fract() == 0.0 && (1.0..=MOST as f64).contains(&v) => Ok(Some(v as usize)),
        Some(v) => Err(Error::Value(format!(
            "initRuntime: threads must be a whole number from 1 to {MOST}, not {v}"
        ))),
    }
}

/// Starts the pool, once: the page's first `initRuntime` (or first evaluation) decides how
/// many threads there are.
pub async fn start(requested: Option<usize>) {
    if STARTED.with(|s| s.borrow().is_some()) {
        return;
    }
    let isolated = global_flag("crossOriginIsolated");
    let cores = hardware_concurrency();
    let wanted = requested.unwrap_or(cores.min(8)).max(1);
    let threads = spawn(wanted, isolated, cores).await;
    let threads = Threads {
        reason: format!("{} ({})", threads.reason, shared_memory_note(isolated)),
        ..threads
    };
    crate::cpu::pool::set_limit(threads.count);
    STARTED.with(|s| *s.borrow_mut() = Some(threads));
}

/// A later `initRuntime`'s `threads` lowers the started pool's limit (a pool never grows: its
/// workers are started once).
pub fn lower(requested: Option<usize>) {
    STARTED.with(|s| {
        if let (Some(started), Some(n)) = (s.borrow_mut().as_mut(), requested)
            && n < started.count
        {
            crate::cpu::pool::set_limit(n);
            started.reason = format!("{} (lowered to {n} by a later initRuntime)", started.reason);
            started.count = n;
        }
    });
}

/// The pool's description once started.
pub fn current() -> Option<Threads> {
    STARTED.with(|s| s.borrow().clone())
}

/// `RuntimeInfo.threads`.
pub fn to_js(threads: &Threads) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "count", threads.count.into());
    let build = if threads.threaded_build {
        "threaded"
    } else {
        "single-threaded"
    };
    set(&object, "build", build.into());
    // Which of the build's two modules this is (the package loads the relaxed one where the
    // engine compiles relaxed SIMD): the compiler's own record, not a guess.
    set(
        &object,
        "relaxedSimd",
        cfg!(target_feature = "relaxed-simd").into(),
    );
    set(&object, "crossOriginIsolated", threads.isolated.into());
    set(&object, "reason", threads.reason.as_str().into());
    object.into()
}

/// `navigator.hardwareConcurrency`, or 1 where it is missing.
fn hardware_concurrency() -> usize {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into());
    navigator
        .and_then(|n| js_sys::Reflect::get(&n, &"hardwareConcurrency".into()))
        .ok()
        .and_then(|v| v.as_f64())
        .map_or(1, |v| (v as usize).max(1))
}

/// Whether this realm offers `SharedArrayBuffer`, which the threaded build's memory is: an
/// isolated page may still lack it (WebKit's workers).
fn shared_memory_note(isolated: bool) -> &'static str {
    let shared = js_sys::Reflect::get(&js_sys::global(), &"SharedArrayBuffer".into())
        .is_ok_and(|v| v.is_function());
    match (isolated, shared) {
        (true, false) => "this browser offers no SharedArrayBuffer here, though it is isolated",
        (_, true) => "SharedArrayBuffer available",
        (false, false) => "no SharedArrayBuffer",
    }
}

/// A boolean property of the global object (`crossOriginIsolated`), false where missing.
fn global_flag(name: &str) -> bool {
    js_sys::Reflect::get(&js_sys::global(), &name.into()).is_ok_and(|v| v.is_truthy())
}

/// The single-threaded build: CPU kernels on the calling thread.
#[cfg(not(target_feature = "atomics"))]
async fn spawn(wanted: usize, isolated: bool, _cores: usize) -> Threads {
    let reason = if isolated {
        "the single-threaded build was loaded (initRuntime's threads: 1, loadWasm told so, or \
         no SharedArrayBuffer): CPU kernels run on the calling thread"
            .to_string()
    } else {
        "the page is not cross-origin isolated (it is served without the headers \
         Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: \
         require-corp), so shared memory is unavailable: the single-threaded build runs CPU \
         kernels on the calling thread"
            .to_string()
    };
    let reason = if wanted > 1 {
        format!("{wanted} threads cannot run: {reason}")
    } else {
        reason
    };
    Threads {
        count: 1,
        threaded_build: false,
        isolated,
        reason,
    }
}

/// The threaded build: `wanted` workers, started and waited for (so that start-up's
/// measurements already see them). Large CPU kernels run on them, not on the page's thread,
/// which awaits them (`scheduler::cpu_batch`); the workers share the kernels' parts.
#[cfg(target_feature = "atomics")]
async fn spawn(wanted: usize, isolated: bool, cores: usize) -> Threads {
    let mut threads = Threads {
        count: wanted,
        threaded_build: true,
        isolated,
        reason: format!(
            "the page is cross-origin isolated: the threaded build runs CPU kernels on {wanted} \
             worker thread{}, off the calling thread ({cores} cores reported)",
            if wanted == 1 { "" } else { "s" },
        ),
    };
    if let Err(e) = workers::start(wanted).await {
        threads.count = 1;
        threads.reason = format!(
            "the threaded build could not start its workers ({e}): CPU kernels run on the \
             calling thread"
        );
    }
    threads
}

/// Counts a pool worker in; `pool_worker.js` calls it before it says it is ready, so that the
/// page's first jobs after start-up already split.
#[cfg(target_feature = "atomics")]
#[unsafe(no_mangle)]
pub extern "C" fn tandem_pool_join() {
    crate::cpu::pool::join()
}

/// A pool worker's loop, called by `pool_worker.js` on its own instance. Never returns.
#[cfg(target_feature = "atomics")]
#[unsafe(no_mangle)]
pub extern "C" fn tandem_pool_work() {
    crate::cpu::pool::work()
}

/// Called by `pool_worker.js` when its loop threw (a part panicked, which aborts the worker's
/// instance): the job's caller then fails instead of waiting for that part.
#[cfg(target_feature = "atomics")]
#[unsafe(no_mangle)]
pub extern "C" fn tandem_pool_failed() {
    crate::cpu::pool::worker_failed()
}

#[cfg(target_feature = "atomics")]
mod workers;
