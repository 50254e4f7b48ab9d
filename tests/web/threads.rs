//! The CPU pool in the page: `RuntimeInfo.threads` says which build runs and why, and every
//! kernel that splits its work over the pool gives the bits it gives on one thread. In the
//! single-threaded build (a page without cross-origin isolation) the same checks run with one
//! thread, and the reason must name the missing isolation.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::cpu::pool;
use tandem::cpu::{lanes, matmul, norm, reduce, row_norm};
use tandem::dtype::DType;
use tandem::graph::primitive::{ReduceOp, RowNorm};
use tandem::js::runtime::init_runtime;

use crate::common::*;

fn isolated() -> bool {
    Reflect::get(&js_sys::global(), &"crossOriginIsolated".into()).is_ok_and(|v| v.is_truthy())
}

#[wasm_bindgen_test]
async fn runtime_info_says_which_build_runs_and_on_how_many_threads() {
    let info = runtime_info().await;
    let threads = get(&info, "threads");
    let count = get(&threads, "count").as_f64().unwrap();
    let build = get(&threads, "build").as_string().unwrap();
    let reason = get(&threads, "reason").as_string().unwrap();
    assert_eq!(
        get(&threads, "relaxedSimd").as_bool(),
        Some(cfg!(target_feature = "relaxed-simd")),
        "relaxedSimd is the module's own build flag"
    );
    assert_eq!(
        get(&threads, "crossOriginIsolated").as_bool(),
        Some(isolated())
    );
    if cfg!(target_feature = "atomics") {
        assert_eq!(build, "threaded");
        assert!(
            isolated(),
            "the threaded build runs only on an isolated page"
        );
        let cores = Reflect::get(&js_sys::global(), &"navigator".into())
            .and_then(|n| Reflect::get(&n, &"hardwareConcurrency".into()))
            .unwrap()
            .as_f64()
            .unwrap();
        assert_eq!(count, cores.min(8.0), "{reason}");
        assert_eq!(
            pool::threads(),
            count as usize,
            "every worker joined: {reason}"
        );
    } else {
        assert_eq!((build.as_str(), count), ("single-threaded", 1.0));
        assert_eq!(pool::threads(), 1);
        if !isolated() {
            assert!(reason.contains("not cross-origin isolated"), "{reason}");
            assert!(reason.contains("Cross-Origin-Embedder-Policy"), "{reason}");
        }
    }
}

#[wasm_bindgen_test]
async fn a_bad_threads_option_is_a_value_error() {
    for bad in [
        JsValue::from(0),
        2.5.into(),
        "2".into(),
        65.into(),
        f64::NAN.into(),
    ] {
        let opts = options(&[("threads", bad.clone())]);
        let err = init_runtime(opts)
            .err()
            .unwrap_or_else(|| panic!("{bad:?} is refused"));
        let err: js_sys::Error = err.dyn_into().unwrap();
        assert_eq!(String::from(err.name()), "ValueError", "{bad:?}");
        assert!(String::from(err.message()).contains("threads"), "{bad:?}");
    }
    // A typo is caught by name too.
    let err = init_runtime(options(&[("thread", 2.into())]))
        .err()
        .unwrap();
    let message = String::from(err.dyn_into::<js_sys::Error>().unwrap().message());
    assert!(message.contains("thread"), "{message}");
}

#[wasm_bindgen_test]
async fn a_later_threads_option_lowers_the_pool_and_the_info_says_so() {
    let info = runtime_info().await;
    let before = get(&get(&info, "threads"), "count").as_f64().unwrap();
    let lowered = JsFuture::from(init_runtime(options(&[("threads", 1.into())])).unwrap())
        .await
        .unwrap();
    let threads = get(&lowered, "threads");
    assert_eq!(get(&threads, "count").as_f64(), Some(1.0));
    assert_eq!(pool::threads(), 1);
    if before > 1.0 {
        let reason = get(&threads, "reason").as_string().unwrap();
        assert!(reason.contains("lowered to 1"), "{reason}");
    }
    // Back to what the page had, for the tests after this one.
    pool::set_limit(before as usize);
}

/// Deterministic values in [-1, 1).
fn values(len: usize, seed: u32) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let h = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed);
            (h % 20_011) as f32 / 10_005.5 - 1.0
        })
        .collect()
}

/// `kernel()` split over the page's pool and on one thread.
fn both<T>(kernel: impl Fn() -> T) -> (T, T) {
    let threads = pool::threads();
    let split = kernel();
    pool::set_limit(1);
    let alone = kernel();
    pool::set_limit(threads);
    (split, alone)
}

#[wasm_bindgen_test]
async fn kernels_split_over_the_pool_give_the_bits_of_one_thread() {
    runtime_info().await;
    if cfg!(target_feature = "atomics") {
        assert!(pool::threads() > 1 && pool::parts_for(1 << 20) > 1);
    }
    let (a, b) = (values(300 * 257, 1), values(257 * 190, 2));
    let (split, alone) = both(|| matmul::matmul(1, 300, 190, 257, (&a, 0, 0), (&b, 0, 0)));
    assert_eq!(split, alone, "matmul");
    let (split, alone) = both(|| matmul::matmul(3, 7, 190, 100, (&a, 0, 700), (&b, 0, 0)));
    assert_eq!(split, alone, "a batch of thin products");

    let x = values(1 << 20, 3);
    let (split, alone) = both(|| row_norm::row_norm(RowNorm::Softmax, &x, 1024, 1024));
    assert_eq!(split, alone, "softmax");
    let (split, alone) = both(|| row_norm::row_norm(RowNorm::LogSumExp, &x, 4096, 256));
    assert_eq!(split, alone, "logsumexp");
    let words: &[u32] = bytemuck::cast_slice(&x);
    let (split, alone) =
        both(|| reduce::reduce_rows(ReduceOp::Sum, DType::Float32, words, 2048, 512));
    assert_eq!(split, alone, "sum over rows");
    let plain = norm::Norm {
        rms: false,
        eps: 1e-5,
        weight: None,
        bias: None,
    };
    let (split, alone) = both(|| norm::norm(&plain, &x, 768));
    assert_eq!(split, alone, "layer norm");
    let (split, alone) = both(|| lanes::unary(&x[3..], |v| v * v));
    assert_eq!(split, alone, "a unary lane function over an odd length");
    let y = values(x.len(), 4);
    let (p, q) = (lanes::Side::Dense(&x[5..]), lanes::Side::Dense(&y[5..]));
    let (split, alone) = both(|| lanes::binary(x.len() - 5, p, q, |p, q| p * q));
    assert_eq!(split, alone, "a binary lane function");
}

#[wasm_bindgen_test]
async fn a_cpu_program_on_the_pool_reads_as_on_one_thread_and_frees_its_memory() {
    use tandem::js::functions::{add, conv2d, exp, matmul, relu, reshape, softmax};
    // Earlier tests of the binary leave arrays to the collector, which may free them midway.
    settled_runtime_info().await;
    let (start, before) = (stat("active_bytes.all.current"), active_blocks());
    let run = || async {
        let flat = float_array(&values(512 * 512, 7));
        let a = reshape(&flat, floats(&[512.0, 512.0]), JsValue::UNDEFINED).unwrap();
        dispose(&js_value(&flat));
        let product = matmul(&a, &a, cpu()).unwrap();
        let soft = softmax(&product, cpu()).unwrap();
        let out = exp(&soft, cpu()).unwrap();
        let mut got = to_vec(&out).await;
        // A convolution: its patches (im2col) and its narrow matmul split too.
        let flat = float_array(&values(2 * 32 * 32 * 8, 8));
        let image = reshape(&flat, floats(&[2.0, 32.0, 32.0, 8.0]), JsValue::UNDEFINED).unwrap();
        let flat_w = float_array(&values(16 * 3 * 3 * 8, 9));
        let weight = reshape(&flat_w, floats(&[16.0, 3.0, 3.0, 8.0]), JsValue::UNDEFINED).unwrap();
        let opts = options(&[("padding", 1.into()), ("stream", "cpu".into())]);
        let conv = conv2d(&image, &weight, opts.clone()).unwrap();
        got.extend(to_vec(&conv).await);
        // With a bias and an activation that nothing else holds: one fused kernel whose
        // product makes the patches a block of rows at a time, on whichever thread.
        // (One JS handle each, disposed before the read: a handle left alive holds its array.)
        let fused = js_value(&conv2d(&image, &weight, opts).unwrap());
        let biased = add(fused.clone(), 0.25.into(), cpu()).unwrap();
        let act = relu(&biased, cpu()).unwrap();
        dispose(&fused);
        drop(biased);
        got.extend(to_vec(&act).await);
        for x in [
            &a, &product, &soft, &out, &flat, &image, &flat_w, &weight, &conv, &act,
        ] {
            dispose(&js_value(x));
        }
        got
    };
    let threads = pool::threads();
    // The default budget of work on the calling thread, then every CPU node on the pool's
    // workers (the threaded build), then every one on the calling thread alone.
    let pooled = run().await;
    let queued = pool::offloaded();
    tandem::scheduler::set_offload_work(0);
    let all_pooled = run().await;
    if cfg!(target_feature = "atomics") {
        assert!(
            pool::offloaded() > queued,
            "the CPU nodes went to the workers"
        );
    }
    tandem::scheduler::set_offload_work(usize::MAX);
    pool::set_limit(1);
    let alone = run().await;
    pool::set_limit(threads);
    tandem::scheduler::set_offload_work(tandem::scheduler::DEFAULT_OFFLOAD_WORK);
    assert_eq!(pooled, alone);
    assert_eq!(all_pooled, alone);
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    assert_active_back(start, &before);
}

/// What happened first: a timer set as a read starts, or the read.
async fn first_of_timer_and_read(read: js_sys::Promise) -> &'static str {
    let order = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let timer = {
        let order = order.clone();
        js_sys::Promise::new(&mut |resolve, _| {
            let order = order.clone();
            let fired = Closure::once_into_js(move || {
                order.borrow_mut().push("timer");
                let _ = resolve.call0(&JsValue::NULL);
            });
            let set_timeout: js_sys::Function =
                Reflect::get(&js_sys::global(), &"setTimeout".into())
                    .unwrap()
                    .unchecked_into();
            set_timeout
                .call2(&JsValue::NULL, &fired, &0.into())
                .unwrap();
        })
    };
    // The timer's callback records itself whenever it runs, awaited or not.
    JsFuture::from(read).await.unwrap();
    order.borrow_mut().push("read");
    JsFuture::from(timer).await.unwrap();
    order.borrow()[0]
}

#[wasm_bindgen_test]
async fn a_long_cpu_kernel_leaves_the_page_thread_free_in_the_threaded_build() {
    use tandem::js::functions::{matmul, reshape};
    // Earlier tests of the binary leave arrays to the collector, which may free them midway.
    settled_runtime_info().await;
    let (start, before) = (stat("active_bytes.all.current"), active_blocks());
    let flat = float_array(&values(1024 * 1024, 11));
    let a = reshape(&flat, floats(&[1024.0, 1024.0]), JsValue::UNDEFINED).unwrap();
    let product = matmul(&a, &a, cpu()).unwrap();
    // The read is not awaited at once: a timer set now fires while the workers multiply (the
    // threaded build), or after the calling thread has (the single-threaded build).
    let read = product.to_array();
    dispose(&js_value(&product));
    let first = first_of_timer_and_read(read).await;
    if cfg!(target_feature = "atomics") {
        assert_eq!(first, "timer", "the page's thread ran the matmul");
    } else {
        assert_eq!(first, "read");
    }
    for x in [flat, a, product] {
        dispose(&js_value(&x));
    }
    JsFuture::from(tandem::js::stream::synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    assert_active_back(start, &before);
}
