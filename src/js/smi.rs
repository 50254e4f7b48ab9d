//! `smi()`: the nvidia-smi view of the device (see `crate::observe::busy` for how utilization is
//! measured and which fields a browser cannot know).

use wasm_bindgen::prelude::*;

use crate::error::Error;
use crate::js::error::{JsResult, js};
use crate::js::runtime::with_started;
use crate::js::set_property as set;
use crate::js::torch::{adapter_names, total_memory};
use crate::memory::allocator;
use crate::memory::stats::Scope;
use crate::observe::busy::MAX_PERIOD_MS;
use crate::observe::smi::{FIELDS, Format, Sample, Value, csv, parse_query};
use crate::stream::Device;

/// The sample period without `opts.periodMs`, as nvidia-smi's longest.
const DEFAULT_PERIOD_MS: f64 = 1000.0;

/// `smi()` gives every field as an object (numbers in the field's unit, `"[N/A]"` where a
/// browser cannot know); `smi({query, format})` gives nvidia-smi's CSV text for the fields of
/// `query` (all of them without one). `opts.periodMs` is the sample period of the
/// utilizations, up to 60,000.
#[wasm_bindgen(js_name = smi)]
pub fn smi(opts: JsValue) -> JsResult<JsValue> {
    let op = "smi";
    let opts = js(crate::js::options::Options::parse(
        op,
        &opts,
        &["query", "format", "periodMs"],
    ))?;
    let fields = match js(opts.string("query"))? {
        Some(query) => js(parse_query(&query))?,
        None => FIELDS.to_vec(),
    };
    let format = js(opts.string("format"))?
        .map(|f| js(Format::parse(&f)))
        .transpose()?;
    let period_ms = js(opts.number("periodMs"))?.unwrap_or(DEFAULT_PERIOD_MS);
    if !(period_ms > 0.0 && period_ms <= MAX_PERIOD_MS) {
        return js(Err(Error::Value(format!(
            "{op}: opts.periodMs must be a number of milliseconds in (0, {MAX_PERIOD_MS}], got {period_ms}"
        ))));
    }
    let sample = sample(period_ms);
    Ok(match format {
        Some(format) => csv(&fields, &sample, format).into(),
        None => {
            let object = js_sys::Object::new();
            for field in fields {
                let value = match sample.value(field) {
                    Value::Text(t) => t.into(),
                    Value::Number(n) => JsValue::from_f64(n as f64),
                    Value::NotAvailable => "[N/A]".into(),
                };
                set(&object, field.name(), value);
            }
            object.into()
        }
    })
}

fn sample(period_ms: f64) -> Sample {
    let (utilization_gpu, utilization_memory) = with_started(|rt| {
        rt.and_then(|rt| rt.gpu())
            .map(|gpu| {
                gpu.monitor.watch();
                (
                    gpu.monitor.gpu.busy_fraction(period_ms),
                    gpu.monitor.transfers.busy_fraction(period_ms),
                )
            })
            .unzip()
    });
    let stats = allocator::stats();
    Sample {
        timestamp: timestamp(),
        name: adapter_names(Device::Gpu).0,
        // A browser does not tell a page its driver.
        driver_version: None,
        utilization_gpu,
        utilization_memory,
        total_bytes: total_memory(Device::Gpu),
        used_bytes: stats.reserved_bytes.get(Scope::Gpu).current,
    }
}

/// Local time as nvidia-smi prints it: `YYYY/MM/DD HH:MM:SS.mmm`.
fn timestamp() -> String {
    let now = js_sys::Date::new_0();
    format!(
        "{:04}/{:02}/{:02} {:02}:{:02}:{:02}.{:03}",
        now.get_full_year(),
        now.get_month() + 1,
        now.get_date(),
        now.get_hours(),
        now.get_minutes(),
        now.get_seconds(),
        now.get_milliseconds()
    )
}
