//! The runtime's one clock, for profiles, the memory history and the monitor.

/// Milliseconds on the runtime's clock: `performance.now()` in the browser (the page's or the
/// worker's), time since first use natively.
#[cfg(target_arch = "wasm32")]
pub fn now_ms() -> f64 {
    use wasm_bindgen::JsCast;
    thread_local! {
        // Looked up once: the scheduler reads the clock several times per op.
        static PERFORMANCE: Option<web_sys::Performance> =
            js_sys::Reflect::get(&js_sys::global(), &"performance".into())
                .ok()
                .and_then(|p| p.dyn_into::<web_sys::Performance>().ok());
    }
    PERFORMANCE.with(|performance| {
        performance
            .as_ref()
            .map_or_else(js_sys::Date::now, |p| p.now())
    })
}

#[cfg(not(target_arch = "wasm32"))]
pub fn now_ms() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}
