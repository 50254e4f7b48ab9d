//! `recordMemoryHistory` and `memoryHistory` (PyTorch's `_record_memory_history` and the
//! events of its snapshots): the allocator's events, with the op that made each block and, on
//! request, the JS stack of the call that allocated it.

use wasm_bindgen::prelude::*;

use crate::error::Error;
use crate::js::error::{JsResult, js};
use crate::js::options::{Options, count_of};
use crate::js::set_property as set;
use crate::memory::allocator;
use crate::memory::history::{Event, Recording, set_stack_provider};

/// Frames a recorded stack may have, tandem's own included.
const STACK_FRAMES: u32 = 64;

/// How many events are kept without `opts.maxEntries`.
const DEFAULT_MAX_ENTRIES: usize = 100_000;

/// Starts recording the allocator's events (clearing earlier ones) or, with `enabled: false`,
/// stops (keeping them to read). `opts.maxEntries` bounds the ring (100,000 by default);
/// `opts.stacks` keeps the JS stack of each allocating call, which costs a stack trace per
/// event.
#[wasm_bindgen(js_name = recordMemoryHistory)]
pub fn record_memory_history(opts: JsValue) -> JsResult<()> {
    let op = "recordMemoryHistory";
    let opts = js(Options::parse(
        op,
        &opts,
        &["enabled", "maxEntries", "stacks"],
    ))?;
    let enabled = match opts.get("enabled") {
        None => true,
        Some(v) => v.as_bool().ok_or_else(|| {
            crate::js::error::to_js(Error::Value(format!(
                "{op}: opts.enabled must be a boolean"
            )))
        })?,
    };
    let max_entries = match opts.get("maxEntries") {
        None => DEFAULT_MAX_ENTRIES,
        Some(v) => js(count_of(op, "opts.maxEntries", &v))?,
    };
    let stacks = js(opts.flag("stacks"))?;
    if stacks {
        set_stack_provider(js_stack);
    }
    allocator::record_history(enabled.then_some(Recording {
        max_entries,
        stacks,
    }));
    Ok(())
}

/// Notes where the page made `array` (the current JS stack) while the history records
/// stacks, so that its blocks' events carry the page's call rather than the evaluation's.
pub(crate) fn note_origin(array: &crate::array::Array) {
    if allocator::history_wants_stacks()
        && array.origin().is_none()
        && let Some(stack) = js_stack()
    {
        array.set_origin(stack.into());
    }
}

/// The JS stack of the current call, without the frames of tandem itself (its wasm and its
/// glue), so that it starts at the page's own call; the whole stack if nothing else is left.
fn js_stack() -> Option<String> {
    // V8 keeps 10 frames by default, all of them tandem's own here: keep enough to reach
    // the page's.
    let constructor = js_sys::Reflect::get(&js_sys::global(), &"Error".into()).ok()?;
    let limit_key = JsValue::from("stackTraceLimit");
    let limit = js_sys::Reflect::get(&constructor, &limit_key).ok();
    let _ = js_sys::Reflect::set(&constructor, &limit_key, &STACK_FRAMES.into());
    let error = js_sys::Error::new("");
    if let Some(limit) = limit {
        let _ = js_sys::Reflect::set(&constructor, &limit_key, &limit);
    }
    let stack = js_sys::Reflect::get(&error, &"stack".into())
        .ok()?
        .as_string()?;
    let frames: Vec<&str> = stack
        .lines()
        .skip(1)
        .filter(|line| !is_tandem_frame(line))
        .collect();
    Some(if frames.is_empty() {
        stack
    } else {
        frames.join("\n")
    })
}

fn is_tandem_frame(line: &str) -> bool {
    ["tandem_bg.wasm", "/tandem.js:", "wasm-function["]
        .iter()
        .any(|mark| line.contains(mark))
}

/// The events recorded, oldest first: `{action, id, bytes, device, stream, op, timeMs,
/// stack?}`.
#[wasm_bindgen(js_name = memoryHistory)]
pub fn memory_history() -> js_sys::Array {
    allocator::history().iter().map(event_to_js).collect()
}

fn event_to_js(event: &Event) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "action", event.action.name().into());
    set(&object, "id", JsValue::from_f64(event.id as f64));
    set(&object, "bytes", JsValue::from_f64(event.bytes as f64));
    set(&object, "device", event.device.name().into());
    let stream = event.stream.map_or(JsValue::NULL, |s| {
        format!("{}:{}", s.device.name(), s.index).into()
    });
    set(&object, "stream", stream);
    set(&object, "op", event.op.into());
    set(&object, "timeMs", JsValue::from_f64(event.time_ms));
    if let Some(stack) = &event.stack {
        set(&object, "stack", stack.as_str().into());
    }
    object.into()
}
