//! `memoryStats()`: live array bytes per device and bytes moved between them, under PyTorch's
//! key names.

use wasm_bindgen::prelude::*;

use crate::memory::{Gauge, stats};

/// The statistics as a flat `Record<string, number>` with PyTorch's dotted key names.
#[wasm_bindgen(js_name = memoryStats, unchecked_return_type = "Record<string, number>")]
pub fn memory_stats() -> JsValue {
    let stats = stats();
    let object = js_sys::Object::new();
    let mut put = |key: &str, value: u64| {
        // Setting a data property on a fresh plain object cannot fail.
        let _ = js_sys::Reflect::set(&object, &key.into(), &JsValue::from_f64(value as f64));
    };
    for (pool, gauge) in [("all", stats.all), ("cpu", stats.cpu), ("gpu", stats.gpu)] {
        put_gauge(&mut put, &format!("active_bytes.{pool}"), gauge);
    }
    put("transfer_bytes.cpu_to_gpu", stats.cpu_to_gpu);
    put("transfer_bytes.gpu_to_cpu", stats.gpu_to_cpu);
    object.into()
}

fn put_gauge(put: &mut impl FnMut(&str, u64), prefix: &str, gauge: Gauge) {
    put(&format!("{prefix}.current"), gauge.current);
    put(&format!("{prefix}.peak"), gauge.peak);
    put(&format!("{prefix}.allocated"), gauge.allocated);
    put(&format!("{prefix}.freed"), gauge.freed);
}
