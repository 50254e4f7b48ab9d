//! The live `NDArray`s by handle, and the `tidy` scopes that collect the handles made while
//! they are open. The `NDArray` class and `tidy` both build on this table; it knows neither.

use rustc_hash::FxHashMap as HashMap;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::JsValue;

use crate::array::Array;

/// An `NDArray`'s array, shared with the table so that `tidy` can dispose it by handle;
/// `None` once disposed.
pub(crate) type Slot = Rc<RefCell<Option<Array>>>;

thread_local! {
    /// Every live `NDArray` by handle, so that arrays passed inside JS containers (the list of
    /// `concatenate`) can be found without taking them from their owners, and so that `tidy`
    /// can dispose them.
    static LIVE: RefCell<HashMap<u32, Slot>> = RefCell::new(HashMap::default());
    static NEXT_HANDLE: Cell<u32> = const { Cell::new(1) };
    /// The handles created in each open `tidy`, innermost last.
    static SCOPES: RefCell<Vec<Vec<u32>>> = const { RefCell::new(Vec::new()) };
}

/// The handle of a JS value that is an `NDArray`, read from its `__handle` property.
pub(crate) fn handle_of(value: &JsValue) -> Option<u32> {
    js_sys::Reflect::get(value, &crate::js::property("__handle"))
        .ok()
        .and_then(|h| h.as_f64())
        .map(|h| h as u32)
}

/// Registers `array` under a new handle, noted in the innermost open `tidy`.
pub(crate) fn register(array: Array) -> (u32, Slot) {
    // Handle 0 is never given out: borrowed and empty NDArrays use it.
    let handle = NEXT_HANDLE.with(|n| n.replace(n.get().wrapping_add(1).max(1)));
    let slot = Rc::new(RefCell::new(Some(array)));
    LIVE.with(|live| live.borrow_mut().insert(handle, slot.clone()));
    note_created(handle);
    (handle, slot)
}

/// The array behind a live handle; `None` once disposed.
pub(crate) fn array_of(handle: u32) -> Option<Array> {
    LIVE.with(|live| live.borrow().get(&handle).and_then(|s| s.borrow().clone()))
}

/// Disposes the array behind `handle`, if it is still live.
pub(crate) fn dispose(handle: u32) {
    let slot = LIVE.with(|live| live.borrow_mut().remove(&handle));
    if let Some(slot) = slot {
        // Taken out before it drops, so no borrow is held while memory is released.
        let array = slot.borrow_mut().take();
        drop(array);
    }
}

/// Notes `handle` in the innermost open `tidy`.
pub(crate) fn note_created(handle: u32) {
    SCOPES.with(|scopes| {
        if let Some(scope) = scopes.borrow_mut().last_mut() {
            scope.push(handle);
        }
    });
}

/// Opens a `tidy` scope.
pub(crate) fn open_scope() {
    SCOPES.with(|scopes| scopes.borrow_mut().push(Vec::new()));
}

/// Closes the innermost `tidy` scope and returns the handles created in it.
pub(crate) fn close_scope() -> Vec<u32> {
    SCOPES.with(|scopes| scopes.borrow_mut().pop().unwrap_or_default())
}
