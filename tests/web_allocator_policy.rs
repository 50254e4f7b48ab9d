//! `changeCurrentAllocator` in a page of its own, so that nothing else holds memory: it works
//! once the runtime has started and before any array exists, throws while one does, and
//! works again once all are freed.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "web/common/mod.rs"]
mod common;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::array;
use tandem::js::torch::{change_current_allocator, empty_cache};

use crate::common::*;

#[wasm_bindgen_test]
async fn the_policy_changes_before_the_first_allocation_and_not_while_memory_is_held() {
    runtime_info().await;
    change_current_allocator("exact".into()).unwrap();
    // One JS object for the array, as a page holds it: disposing it frees the array.
    let a = JsValue::from(array(floats(&[1.0; 300]), JsValue::UNDEFINED).unwrap());
    let b = tandem::js::functions::add(a.clone(), a.clone(), gpu()).unwrap();
    assert_eq!(to_vec(&b).await, vec![2.0; 300]);
    let err = change_current_allocator("none".into()).unwrap_err();
    let message = describe(&err);
    assert!(
        message.contains("while no array or raw block holds memory"),
        "{message}"
    );
    // Naming the current policy is no change and always allowed.
    change_current_allocator("exact".into()).unwrap();
    dispose(&a);
    b.dispose();
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    change_current_allocator("none".into()).unwrap();
    let c = JsValue::from(array(floats(&[3.0; 300]), JsValue::UNDEFINED).unwrap());
    let d = tandem::js::functions::add(c.clone(), c.clone(), gpu()).unwrap();
    assert_eq!(to_vec(&d).await, vec![6.0; 300]);
    assert_eq!(
        tandem::js::memory::get_cache_memory(),
        0.0,
        "none caches nothing"
    );
    dispose(&c);
    d.dispose();
    empty_cache();
    change_current_allocator("best-fit".into()).unwrap();
}
