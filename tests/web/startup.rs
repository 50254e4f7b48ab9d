//! Start-up choices in the browser: the IndexedDB store round-trips them, and `RuntimeInfo`
//! says where each choice came from, the matmul kernel's live (chosen at the first GPU
//! matmul).

use wasm_bindgen_test::*;

use tandem::js::functions::{array, matmul};
use tandem::js::store::{put, read_all};

use crate::common::*;

#[wasm_bindgen_test]
async fn the_store_keeps_choices_by_key() {
    put("test key", "matmul=registers 8x8;exp=accurate")
        .await
        .unwrap();
    put("test key", "matmul=registers 8x4").await.unwrap();
    let all = read_all().await;
    let found: Vec<&(String, String)> = all.iter().filter(|(k, _)| k == "test key").collect();
    assert_eq!(found.len(), 1, "{all:?}");
    assert_eq!(found[0].1, "matmul=registers 8x4");
}

#[wasm_bindgen_test]
async fn runtime_info_says_where_each_choice_came_from() {
    let info = runtime_info().await;
    let source = |part: &str| get(&get(&info, part), "source").as_string().unwrap();
    if !get(&info, "gpu").is_truthy() {
        return;
    }
    assert!(["measured", "remembered"].contains(&source("math").as_str()));
    assert!(["measured", "remembered", "given"].contains(&source("defaultDevice").as_str()));
    let a = array(
        floats(&[1.0; 64]),
        options(&[("shape", floats(&[8.0, 8.0]))]),
    )
    .unwrap();
    let product = matmul(&a, &a, gpu()).unwrap();
    assert_eq!(to_vec(&product).await, vec![8.0; 64]);
    assert!(["measured", "remembered"].contains(&source("matmul").as_str()));
    let kernel = get(&get(&info, "matmul"), "kernel");
    assert!(
        kernel.is_string(),
        "a kernel once a GPU matmul ran: {kernel:?}"
    );
}
