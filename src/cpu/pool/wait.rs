//! Sleeping and waking on a word. A worker sleeps (in wasm, `memory.atomic.wait32`, which a
//! Web Worker may do); the submitting thread never sleeps, because the page's thread may not
//! block in wasm: it spins for the parts still running, which are as long as its own.

use std::sync::atomic::AtomicU32;

/// Sleeps while `word` holds `seen` (it may return early; callers loop).
pub fn wait_while(word: &AtomicU32, seen: u32) {
    imp::wait_while(word, seen);
}

/// Wakes every thread sleeping on `word`, after it was changed.
pub fn wake_all(word: &AtomicU32) {
    imp::wake(word, u32::MAX);
}

/// Wakes at most `count` of the threads sleeping on `word`, after it was changed.
pub fn wake(word: &AtomicU32, count: u32) {
    imp::wake(word, count);
}

/// Resolves once `word` may no longer hold `seen` (it may resolve early, or after a while
/// anyway, so that a caller also notices a worker that died; callers loop). The page's
/// thread awaits here without blocking.
pub async fn until_changed(word: &AtomicU32, seen: u32) {
    imp::until_changed(word, seen).await;
}

/// Checks `word` up to `spins` times while it holds `seen`.
pub fn spin_while(word: &AtomicU32, seen: u32, spins: u32) {
    for _ in 0..spins {
        if word.load(std::sync::atomic::Ordering::SeqCst) != seen {
            return;
        }
        std::hint::spin_loop();
    }
}

/// Spins until `done()`; natively it yields now and then, so a waiting test thread lets the
/// workers run on a busy machine.
pub fn spin_until(done: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !done() {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        #[cfg(not(target_arch = "wasm32"))]
        if spins.is_multiple_of(64) {
            std::thread::yield_now();
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
mod imp {
    use super::*;
    use core::arch::wasm32::{memory_atomic_notify, memory_atomic_wait32};

    pub fn wait_while(word: &AtomicU32, seen: u32) {
        // SAFETY: the pointer is to a live, aligned word of the shared memory.
        unsafe { memory_atomic_wait32(word.as_ptr().cast(), seen as i32, -1) };
    }

    pub fn wake(word: &AtomicU32, count: u32) {
        // SAFETY: as above.
        unsafe { memory_atomic_notify(word.as_ptr().cast(), count) };
    }

    /// How long one await lasts at most, in milliseconds: the caller then checks whether a
    /// worker died.
    const AWAIT_MS: f64 = 200.0;

    /// `Atomics.waitAsync` on the word (a `notify` resolves it); where the browser lacks it,
    /// a short timer instead.
    pub async fn until_changed(word: &AtomicU32, seen: u32) {
        use wasm_bindgen::JsCast;
        let memory = wasm_bindgen::memory().unchecked_into::<js_sys::WebAssembly::Memory>();
        let words = js_sys::Int32Array::new(&memory.buffer());
        let index = word.as_ptr() as u32 / 4;
        let waiting =
            js_sys::Atomics::wait_async_with_timeout(&words, index, seen as i32, AWAIT_MS);
        let promise = match waiting {
            Ok(result) => {
                let value = js_sys::Reflect::get(&result, &"value".into()).ok();
                match value.and_then(|v| v.dyn_into::<js_sys::Promise>().ok()) {
                    Some(promise) => promise,
                    // "not-equal" or "timed-out": it has changed already, or look again.
                    None => return,
                }
            }
            Err(_) => timer(1.0),
        };
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    }

    /// A promise that resolves after `ms` (the page's or the worker's `setTimeout`).
    fn timer(ms: f64) -> js_sys::Promise {
        use wasm_bindgen::JsCast;
        js_sys::Promise::new(&mut |resolve, _| {
            let set_timeout = js_sys::Reflect::get(&js_sys::global(), &"setTimeout".into());
            match set_timeout.and_then(|f| f.dyn_into::<js_sys::Function>()) {
                Ok(set_timeout) => {
                    let _ = set_timeout.call2(&wasm_bindgen::JsValue::NULL, &resolve, &ms.into());
                }
                Err(_) => {
                    let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
                }
            }
        })
    }
}

/// The single-threaded wasm build has no workers: nothing sleeps and nothing is woken.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
mod imp {
    use super::*;

    pub fn wait_while(word: &AtomicU32, seen: u32) {
        unreachable!("no pool worker runs in the single-threaded build ({word:?} {seen})")
    }

    pub fn wake(_: &AtomicU32, _: u32) {}

    pub async fn until_changed(word: &AtomicU32, seen: u32) {
        unreachable!("nothing is queued in the single-threaded build ({word:?} {seen})")
    }
}

/// Natively, a condition variable stands in for the futex: the word is checked under the
/// lock, and changed before the lock is taken to wake, so no wake-up is lost.
#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::*;
    use std::sync::atomic::Ordering::SeqCst;
    use std::sync::{Condvar, Mutex};

    static LOCK: Mutex<()> = Mutex::new(());
    static WOKEN: Condvar = Condvar::new();

    pub fn wait_while(word: &AtomicU32, seen: u32) {
        let mut guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        while word.load(SeqCst) == seen {
            guard = WOKEN.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Every sleeper wakes (one condition variable serves every word); those whose word
    /// has not changed sleep again.
    pub fn wake(_: &AtomicU32, _: u32) {
        drop(LOCK.lock().unwrap_or_else(|e| e.into_inner()));
        WOKEN.notify_all();
    }

    /// Natively nothing waits on this thread's events: it blocks.
    pub async fn until_changed(word: &AtomicU32, seen: u32) {
        wait_while(word, seen);
    }
}
