//! Browser tests: the JS API in headless Chromium on its WebGPU adapter (SwiftShader here).
//! Run with `cargo xtask test` (or `wasm-pack test --headless --chrome`).

use js_sys::Array as JsArray;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use tandem::js::functions::{add, array};
use tandem::js::ndarray::NdArray;

use crate::common::*;

#[wasm_bindgen_test]
async fn init_runtime_reports_the_webgpu_adapter() {
    let info = runtime_info().await;
    assert_eq!(
        get(&info, "gpu"),
        JsValue::TRUE,
        "WebGPU must be available (--enable-unsafe-webgpu)"
    );
    let adapter = get(&info, "adapter");
    let architecture = get(&adapter, "architecture").as_string().unwrap();
    assert_eq!(
        architecture, "swiftshader",
        "headless Chromium here runs SwiftShader"
    );
    assert_eq!(get(&adapter, "isFallbackAdapter"), JsValue::TRUE);
    let limits = get(&info, "limits");
    assert!(
        get(&limits, "maxStorageBufferBindingSize")
            .as_f64()
            .unwrap()
            >= (128 << 20) as f64
    );
    let default = get(&info, "defaultDevice");
    let reason = get(&default, "reason").as_string().unwrap();
    assert!(
        reason.contains("ms on the cpu") && reason.contains("ms on the gpu"),
        "a fallback adapter's default device is chosen by timing both: {reason}"
    );
    let device = get(&default, "device").as_string().unwrap();
    assert!(device == "cpu" || device == "gpu", "{device}");
    let math = get(&info, "math");
    let exp = get(&math, "exp").as_string().unwrap();
    let reason = get(&math, "reason").as_string().unwrap();
    assert!(exp == "builtin" || exp == "accurate", "{exp}");
    assert!(
        reason.contains("built-in") && !reason.contains("did not run"),
        "the probe of the built-in exp ran: {reason}"
    );
    let matmul = get(&info, "matmul");
    let kernel = get(&matmul, "kernel").as_string().unwrap();
    let reason = get(&matmul, "reason").as_string().unwrap();
    web_sys::console::log_1(&format!("matmul: {kernel}: {reason}").into());
    let source = get(&matmul, "source").as_string().unwrap();
    let timed = reason.contains("timed at the first GPU matmul") && reason.contains(&kernel);
    assert!(
        (source == "measured" && timed) || source == "remembered",
        "the matmul kernel was chosen by timing the candidates ({source}): {reason}"
    );
}

/// On the browser's adapter: math.wgsl's `exp_acc` keeps its promise over the probe's sweep,
/// the runtime's `exp` is the probe's verdict on the built-in, and a kernel compiles with the
/// built-in chosen (math.wgsl's override constant, set at pipeline creation).
#[wasm_bindgen_test]
async fn the_exp_probe_runs_on_the_browsers_webgpu() {
    use tandem::gpu::device::pipelines::PipelineCache;
    use tandem::gpu::unary;
    use tandem::startup::exp_probe::{probe_builtin_exp, probe_exp};
    use tandem::{DType, graph::primitive::UnaryOp};
    let runtime = tandem::Runtime::new(tandem::RuntimeOptions {
        default_device: Some(tandem::Device::Gpu),
        ..Default::default()
    })
    .await
    .unwrap();
    let gpu = runtime.gpu().expect("WebGPU");
    let accurate = probe_exp(&gpu.device, &gpu.queue, "exp_acc").await.unwrap();
    assert!(accurate.passed(), "{accurate:?}");
    let builtin = probe_builtin_exp(&gpu.device, &gpu.queue).await.unwrap();
    assert_eq!(gpu.choices.exp.builtin, builtin.passed(), "{builtin:?}");
    let cache = PipelineCache::new(true);
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let key = unary::key(UnaryOp::Exp, DType::Float32, DType::Float32);
    cache.get_or_create(&gpu.device, key, "main", 1, || {
        let source = unary::source(UnaryOp::Exp, DType::Float32, DType::Float32);
        tandem::gpu::elementwise::for_axes(&source, 2)
    });
    assert_eq!(scope.pop().await.map(|e| e.to_string()), None);
}

#[wasm_bindgen_test]
async fn init_runtime_twice_returns_the_same_runtime() {
    let first = runtime_info().await;
    let second = runtime_info().await;
    assert!(js_sys::Object::is(&first, &second), "the same info object");
}

#[wasm_bindgen_test]
async fn add_on_the_gpu_returns_the_sums() {
    runtime_info().await;
    let a = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[10.0, 20.0, 30.0]), JsValue::UNDEFINED).unwrap();
    let c = add(
        js_value(&a),
        js_value(&b),
        options(&[("stream", "gpu".into())]),
    )
    .unwrap();
    assert_eq!(to_vec(&c).await, vec![11.0, 22.0, 33.0]);
    assert!(
        c.array().unwrap().storage().unwrap().on_gpu(),
        "the add ran on WebGPU"
    );
}

#[wasm_bindgen_test]
async fn add_broadcasts_and_matches_the_cpu() {
    runtime_info().await;
    let column = array(
        floats(&[1.0, 2.0]),
        options(&[("shape", floats(&[2.0, 1.0]))]),
    )
    .unwrap();
    let row = array(floats(&[10.0, 20.0, 30.0]), JsValue::UNDEFINED).unwrap();
    let on_gpu = add(
        js_value(&column),
        js_value(&row),
        options(&[("stream", "gpu".into())]),
    )
    .unwrap();
    let on_cpu = add(
        js_value(&column),
        js_value(&row),
        options(&[("stream", "cpu".into())]),
    )
    .unwrap();
    assert_eq!(on_gpu.shape().unwrap().length(), 2);
    let expected = vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0];
    assert_eq!(to_vec(&on_gpu).await, expected);
    assert_eq!(to_vec(&on_cpu).await, expected);
}

#[wasm_bindgen_test]
async fn shape_mismatch_is_a_shape_error_and_the_module_keeps_working() {
    runtime_info().await;
    let err = array(
        floats(&[1.0, 2.0, 3.0]),
        options(&[("shape", floats(&[2.0, 2.0]))]),
    )
    .err()
    .expect("a shape of 4 elements for 3 values must throw");
    let err: js_sys::Error = err.dyn_into().expect("a JS Error");
    assert_eq!(String::from(err.name()), "ShapeError");
    assert!(String::from(err.message()).contains("[2, 2]"));

    let a = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[10.0, 20.0, 30.0]), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        to_vec(&add(js_value(&a), js_value(&b), JsValue::UNDEFINED).unwrap()).await,
        vec![11.0, 22.0, 33.0]
    );
}

#[wasm_bindgen_test]
fn broadcast_mismatch_names_the_op_and_shapes() {
    let a = array(floats(&[1.0, 2.0]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let err: js_sys::Error = add(js_value(&a), js_value(&b), JsValue::UNDEFINED)
        .err()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "ShapeError");
    assert_eq!(
        String::from(err.message()),
        "add: shapes [2] and [3] cannot be broadcast together"
    );
}

#[wasm_bindgen_test]
fn ragged_data_and_bad_options_throw_named_errors() {
    let ragged: JsValue = JsArray::of2(&floats(&[1.0, 2.0]), &floats(&[3.0])).into();
    let err: js_sys::Error = array(ragged, JsValue::UNDEFINED)
        .err()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "ShapeError");

    let bad_dtype = options(&[("dtype", "float64".into())]);
    let err: js_sys::Error = array(floats(&[1.0]), bad_dtype)
        .err()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "DTypeError");

    let a = array(floats(&[1.0]), JsValue::UNDEFINED).unwrap();
    let bad_stream = options(&[("stream", "tpu".into())]);
    let err: js_sys::Error = add(js_value(&a), js_value(&a), bad_stream)
        .err()
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(String::from(err.name()), "ValueError");
}

#[wasm_bindgen_test]
async fn typed_arrays_keep_their_dtype_and_read_back() {
    runtime_info().await;
    let ints = js_sys::Int32Array::from(&[i32::MAX, -4][..]);
    let a = array(ints.into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(a.dtype().unwrap(), "int32");
    let one = array(
        js_sys::Int32Array::from(&[1, 1][..]).into(),
        JsValue::UNDEFINED,
    )
    .unwrap();
    let sum = add(
        js_value(&a),
        js_value(&one),
        options(&[("stream", "gpu".into())]),
    )
    .unwrap();
    let out = JsFuture::from(sum.to_array()).await.unwrap();
    let out: js_sys::Int32Array = out.dyn_into().expect("int32 reads back as Int32Array");
    assert_eq!(out.to_vec(), vec![i32::MIN, -3]);
}

#[wasm_bindgen_test]
async fn tolist_and_item_read_nested_values() {
    runtime_info().await;
    let nested: JsValue = JsArray::of2(&floats(&[1.0, 2.0]), &floats(&[3.0, 4.0])).into();
    let a = array(nested, JsValue::UNDEFINED).unwrap();
    let list = JsFuture::from(a.tolist()).await.unwrap();
    let first_row = JsArray::from(&JsArray::from(&list).get(0));
    assert_eq!(first_row.get(1).as_f64(), Some(2.0));
    let scalar = array(JsValue::from_f64(7.5), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        JsFuture::from(scalar.item()).await.unwrap().as_f64(),
        Some(7.5)
    );
    let err = JsFuture::from(a.item()).await.err().unwrap();
    assert_eq!(
        String::from(err.dyn_into::<js_sys::Error>().unwrap().name()),
        "ValueError"
    );
}

#[wasm_bindgen_test]
async fn a_ten_thousand_node_chain_evaluates_without_overflowing_the_stack() {
    runtime_info().await;
    let one = array(JsValue::from_f64(1.0), JsValue::UNDEFINED).unwrap();
    let mut x = array(floats(&[0.0, 1.0]), JsValue::UNDEFINED).unwrap();
    for _ in 0..10_000 {
        x = add(js_value(&x), js_value(&one), gpu()).unwrap();
    }
    assert_eq!(to_vec(&x).await, vec![10_000.0, 10_001.0]);
}

/// Floats that exercise range reduction, signs, zeros and the special values.
fn sample_floats() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        0.5,
        -1.5,
        2.5,
        3.0,
        -7.25,
        12345.678,
        -1e5,
        1e-3,
        88.0,
        -90.0,
        f64::NAN,
        f64::INFINITY,
        0.3,
        -0.97,
        1.2,
    ]
}

/// The transcendentals over every 16381st float32 pattern on SwiftShader against the CPU
/// stream, to the API's 1e-5 relative. SwiftShader flushes subnormals, so subnormal inputs
/// are skipped and results below the normal range only need to be as small.
#[wasm_bindgen_test]
async fn transcendentals_on_webgpu_hold_their_accuracy_over_float32() {
    use tandem::graph::primitive::UnaryOp::*;
    use tandem::{Array, DType, Device, ops};
    let runtime = tandem::Runtime::new(tandem::RuntimeOptions {
        default_device: Some(Device::Gpu),
        ..Default::default()
    })
    .await
    .unwrap();
    let specials = [0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0, 0x8000_0000];
    let words: Vec<u32> = (0..u32::MAX / 16381)
        .map(|i| i * 16381)
        .chain(specials)
        .collect();
    let x = Array::from_words(words.clone(), &[words.len()], DType::Float32).unwrap();
    let ops_checked = [
        Exp, Expm1, Log, Log1p, Sin, Cos, Tan, Tanh, Sigmoid, Erf, Gelu, Log2, Log10, Sinh, Cosh,
        Arcsin, Arccos, Arctan, Arcsinh, Arccosh, Arctanh, Erfinv,
    ];
    const SMALLEST_NORMAL: f32 = 1.175_494_4e-38;
    for op in ops_checked {
        let on_gpu = runtime
            .read_words(&ops::unary(op, &x, Device::Gpu).unwrap())
            .await
            .unwrap();
        let on_cpu = runtime
            .read_words(&ops::unary(op, &x, Device::Cpu).unwrap())
            .await
            .unwrap();
        for (i, (&g, &c)) in on_gpu.iter().zip(on_cpu.iter()).enumerate() {
            let (input, g, c) = (
                f32::from_bits(words[i]),
                f32::from_bits(g),
                f32::from_bits(c),
            );
            if input != 0.0 && input.abs() < SMALLEST_NORMAL {
                continue;
            }
            let ok = (g.is_nan() && c.is_nan())
                || g == c
                || (c.abs() < SMALLEST_NORMAL && g.abs() < SMALLEST_NORMAL)
                || (g - c).abs() <= 1e-5 * c.abs();
            assert!(
                ok,
                "{}({input:e}) is {g:e} on WebGPU but {c:e} on the CPU",
                op.name()
            );
        }
    }
}

#[wasm_bindgen_test]
async fn unary_ops_on_webgpu_match_the_cpu() {
    use tandem::js::functions::*;
    runtime_info().await;
    let x = array(floats(&sample_floats()), JsValue::UNDEFINED).unwrap();
    type Unary = fn(&NdArray, JsValue) -> Result<NdArray, JsValue>;
    let cases: [(&str, Unary, f32); 33] = [
        ("abs", abs, 0.0),
        ("neg", neg, 0.0),
        ("sign", sign, 0.0),
        ("square", square, 0.0),
        ("sqrt", sqrt, 1e-6),
        ("rsqrt", rsqrt, 1e-6),
        ("exp", exp, 1e-5),
        ("expm1", expm1, 1e-5),
        ("log", log, 1e-5),
        ("log1p", log1p, 1e-5),
        ("sin", sin, 1e-5),
        ("cos", cos, 1e-5),
        ("tan", tan, 1e-5),
        ("tanh", tanh, 1e-5),
        ("sigmoid", sigmoid, 1e-5),
        ("relu", relu, 0.0),
        ("gelu", gelu, 1e-5),
        ("erf", erf, 1e-5),
        ("floor", floor, 0.0),
        ("ceil", ceil, 0.0),
        ("round", round, 0.0),
        ("reciprocal", reciprocal, 1e-6),
        ("log2", log2, 1e-5),
        ("log10", log10, 1e-5),
        ("sinh", sinh, 1e-5),
        ("cosh", cosh, 1e-5),
        ("arcsin", arcsin, 1e-5),
        ("arccos", arccos, 1e-5),
        ("arctan", arctan, 1e-5),
        ("arcsinh", arcsinh, 1e-5),
        ("arccosh", arccosh, 1e-5),
        ("arctanh", arctanh, 1e-5),
        ("erfinv", erfinv, 1e-5),
    ];
    for (name, op, rtol) in cases {
        let on_gpu = to_vec(&op(&x, gpu()).unwrap()).await;
        let on_cpu = to_vec(&op(&x, cpu()).unwrap()).await;
        for (i, (g, c)) in on_gpu.iter().zip(&on_cpu).enumerate() {
            let ok = (g.is_nan() && c.is_nan()) || g == c || (g - c).abs() <= 1e-6 + rtol * c.abs();
            assert!(
                ok,
                "{name}({}) is {g} on WebGPU but {c} on the CPU",
                sample_floats()[i]
            );
        }
    }
}

#[wasm_bindgen_test]
async fn binary_ops_on_views_match_the_cpu_on_webgpu() {
    use tandem::js::functions::*;
    runtime_info().await;
    let values: Vec<f64> = (0..12).map(|i| (i as f64 - 5.5) * 0.75).collect();
    let m = array(floats(&values), options(&[("shape", floats(&[3.0, 4.0]))])).unwrap();
    let t = transpose(&m, JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap();
    let row = array(floats(&[1.0, -2.0, 0.5]), JsValue::UNDEFINED).unwrap();
    type Binary = fn(JsValue, JsValue, JsValue) -> Result<NdArray, JsValue>;
    let cases: [(&str, Binary); 9] = [
        ("add", add),
        ("subtract", subtract),
        ("multiply", multiply),
        ("divide", divide),
        ("power", power),
        ("maximum", maximum),
        ("minimum", minimum),
        ("less", less),
        ("equal", equal),
    ];
    for (name, op) in cases {
        let on_gpu = JsFuture::from(op(js_value(&t), js_value(&row), gpu()).unwrap().to_array())
            .await
            .unwrap();
        let on_cpu = JsFuture::from(op(js_value(&t), js_value(&row), cpu()).unwrap().to_array())
            .await
            .unwrap();
        let g: Vec<f64> = js_sys::Array::from(&on_gpu)
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let c: Vec<f64> = js_sys::Array::from(&on_cpu)
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        for (a, b) in g.iter().zip(&c) {
            assert!(
                (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-5 * b.abs().max(1e-6),
                "{name}: {g:?} vs {c:?}"
            );
        }
    }
}

#[wasm_bindgen_test]
fn every_op_family_reports_bad_input_by_name() {
    use tandem::js::functions::*;
    let flags: JsValue = JsArray::of2(&JsValue::TRUE, &JsValue::FALSE).into();
    let b = array(flags, JsValue::UNDEFINED).unwrap();
    assert_eq!(error_name(neg(&b, JsValue::UNDEFINED)), "DTypeError");
    let m = array(
        floats(&[1.0; 6]),
        options(&[("shape", floats(&[2.0, 3.0]))]),
    )
    .unwrap();
    let v = array(floats(&[1.0; 4]), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        error_name(multiply(js_value(&m), js_value(&v), JsValue::UNDEFINED)),
        "ShapeError"
    );
    assert_eq!(
        error_name(where_(
            js_value(&v),
            js_value(&m),
            js_value(&m),
            JsValue::UNDEFINED
        )),
        "ShapeError"
    );
    assert_eq!(
        error_name(reshape(&m, floats(&[4.0, 2.0]), JsValue::UNDEFINED)),
        "ShapeError"
    );
    assert_eq!(
        error_name(transpose(&m, floats(&[0.0, 0.0]), JsValue::UNDEFINED)),
        "ValueError"
    );
    assert_eq!(
        error_name(squeeze(&m, options(&[("axis", 0.into())]))),
        "ShapeError"
    );
    assert_eq!(
        error_name(astype(&m, "float64", JsValue::UNDEFINED)),
        "DTypeError"
    );
    assert_eq!(
        error_name(slice(
            &m,
            floats(&[0.0]),
            floats(&[1.0]),
            JsValue::UNDEFINED,
            JsValue::UNDEFINED
        )),
        "ValueError"
    );
    assert_eq!(
        error_name(clip(&m, "low".into(), JsValue::NULL, JsValue::UNDEFINED)),
        "ValueError"
    );
    // The module still works after every one of them.
    assert_eq!(
        add(js_value(&m), js_value(&m), JsValue::UNDEFINED)
            .unwrap()
            .shape()
            .unwrap()
            .length(),
        2
    );
}

#[wasm_bindgen_test]
async fn every_kernel_variant_compiles_on_the_browsers_webgpu() {
    use tandem::DType;
    use tandem::gpu::{binary, cast, reduce, select, unary};
    use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
    let runtime = tandem::Runtime::new(tandem::RuntimeOptions {
        default_device: Some(tandem::Device::Gpu),
        ..Default::default()
    })
    .await
    .unwrap();
    let gpu = runtime.gpu().expect("WebGPU");
    let mut sources = Vec::new();
    // The packed dtypes have one kernel of their own, the conversion; every other kernel
    // computes in word dtypes.
    for from in DType::ALL {
        for to in DType::ALL.into_iter().filter(|&to| cast::handles(from, to)) {
            sources.push((cast::key(from, to).to_string(), cast::source(from, to)));
        }
    }
    let words = DType::ALL.into_iter().filter(|d| !d.is_packed());
    for dtype in words.clone() {
        for op in UnaryOp::ALL {
            sources.push((
                unary::key(op, dtype, op.out_dtype(dtype)).to_string(),
                unary::source(op, dtype, op.out_dtype(dtype)),
            ));
        }
        for to in words.clone() {
            sources.push((
                unary::key(UnaryOp::Cast, dtype, to).to_string(),
                unary::source(UnaryOp::Cast, dtype, to),
            ));
            for op in BinaryOp::ALL {
                let promoted = tandem::dtype::promote(dtype, to);
                sources.push((
                    binary::key(op, dtype, to, promoted).to_string(),
                    binary::source(op, dtype, to, promoted),
                ));
            }
        }
        sources.push((
            select::key(DType::Bool, dtype, dtype, dtype).to_string(),
            select::source(DType::Bool, dtype, dtype, dtype),
        ));
        use tandem::gpu::vectorized::{self, Access, OpHeader};
        let vec4 =
            |family: &tandem::gpu::elementwise::Family, header: String, accesses: &[Access]| {
                let stored: Vec<DType> = accesses.iter().map(|_| dtype).collect();
                let op = OpHeader {
                    inputs: family.inputs,
                    function: family.function,
                    stored: &stored,
                    out: dtype,
                };
                (
                    format!("{}{accesses:?}", family.vec4_kernel),
                    vectorized::source(&header, &op, accesses, vectorized::SMALL_WORKGROUP),
                )
            };
        for op in UnaryOp::ALL {
            let header = unary::header(op, dtype, op.out_dtype(dtype));
            sources.push(vec4(&unary::FAMILY, header, &[Access::Dense]));
        }
        for op in BinaryOp::ALL {
            let header = || {
                binary::header(
                    op,
                    dtype,
                    DType::Float32,
                    tandem::dtype::promote(dtype, DType::Float32),
                )
            };
            sources.push(vec4(
                &binary::FAMILY,
                header(),
                &[Access::Dense, Access::Scalar],
            ));
            sources.push(vec4(
                &binary::FAMILY,
                header(),
                &[Access::Scalar, Access::Dense],
            ));
            sources.push(vec4(
                &binary::FAMILY,
                header(),
                &[Access::Dense, Access::Word(7)],
            ));
            sources.push(vec4(
                &binary::FAMILY,
                header(),
                &[Access::Dense, Access::Row(2)],
            ));
        }
        let header = select::header(DType::Bool, dtype, dtype, dtype);
        let accesses = [Access::Row(3), Access::Scalar, Access::Dense];
        sources.push(vec4(&select::FAMILY, header, &accesses));
        let reductions = ReduceOp::ALL;
        for op in reductions {
            sources.push((
                format!("reduce:{}:{}", op.name(), dtype.name()),
                reduce::source(op, dtype),
            ));
        }
    }
    // The vec4 kernel over packed operands and outputs: each load and store of each dtype.
    for dtype in DType::ALL.into_iter().filter(|d| d.is_packed()) {
        use tandem::gpu::vectorized::{self, Access, OpHeader};
        let compute = dtype.compute();
        let header = binary::header(BinaryOp::Add, compute, compute, compute);
        let accesses = [
            [Access::Dense, Access::Scalar],
            [Access::Row(2), Access::Word(7)],
        ];
        for accesses in accesses {
            let op = OpHeader {
                inputs: binary::FAMILY.inputs,
                function: binary::FAMILY.function,
                stored: &[dtype, dtype],
                out: dtype,
            };
            sources.push((
                format!("packed {dtype:?} {accesses:?}"),
                vectorized::source(&header, &op, &accesses, vectorized::SMALL_WORKGROUP),
            ));
        }
    }
    sources.push((
        "fill".into(),
        include_str!("../../src/gpu/wgsl/fill.wgsl").into(),
    ));
    use tandem::gpu::matmul::{Dtypes, MatmulKernel, Variant};
    let float = [DType::Float32, DType::Float16, DType::BFloat16];
    for (a, out) in float
        .into_iter()
        .zip([DType::Float32, DType::Float16, DType::BFloat16])
    {
        let dtypes = Dtypes { a, b: a, out };
        let mut variants = vec![Variant::WorkgroupTiled, Variant::Scalar];
        for kernel in MatmulKernel::CANDIDATES {
            if let MatmulKernel::RegisterTiled(tile) = kernel {
                for cols4 in [1, tile.cols4] {
                    let rows = tile.rows;
                    for transposed in [[false, false], [true, false], [false, true], [true, true]] {
                        variants.push(Variant::Vec4 {
                            rows,
                            cols4,
                            transposed,
                        });
                    }
                }
            }
        }
        for variant in variants {
            // Only the vec4 kernel stores a packed output.
            let dtypes = match variant {
                Variant::Vec4 { .. } => dtypes,
                _ => Dtypes {
                    out: DType::Float32,
                    ..dtypes
                },
            };
            sources.push((format!("{variant:?} {dtypes:?}"), variant.source(dtypes)));
        }
    }
    for write in [false, true] {
        for dtype in [DType::Float32, DType::Float16, DType::BFloat16] {
            let source = tandem::gpu::row_norm::source(write, dtype);
            sources.push((format!("row_norm write {write} {dtype:?}"), source));
        }
    }
    // The strided kernels' index arithmetic is unrolled per dispatch for its axes: every
    // kernel over three, and one over each count.
    use tandem::gpu::elementwise::for_axes;
    for axes in 1..=8 {
        let exp = unary::source(UnaryOp::Exp, DType::Float32, DType::Float32);
        sources.push((format!("exp over {axes} axes"), for_axes(&exp, axes)));
    }
    let mut problems = Vec::new();
    for (key, source) in sources {
        let unrolled = source.contains("struct Dims") && !source.contains("fn operand_offsets");
        let source = if unrolled {
            for_axes(&source, 3)
        } else {
            source
        };
        let module = gpu
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&key),
                source: wgpu::ShaderSource::Wgsl(
                    tandem::gpu::device::pipelines::with_index(&source).into(),
                ),
            });
        for m in module.get_compilation_info().await.messages {
            if m.message_type == wgpu::CompilationMessageType::Error {
                problems.push(format!("{key}: {:?}: {}", m.location, m.message));
            }
        }
        if problems.len() > 5 {
            break;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[wasm_bindgen_test]
async fn reductions_on_webgpu_match_the_cpu() {
    use tandem::js::functions::*;
    runtime_info().await;
    let values: Vec<f64> = (0..2000)
        .map(|i| ((i * 37 % 101) as f64 - 50.0) / 8.0)
        .collect();
    let x = array(
        floats(&values),
        options(&[("shape", floats(&[4.0, 500.0]))]),
    )
    .unwrap();
    type Reduction = fn(&NdArray, JsValue) -> Result<NdArray, JsValue>;
    let cases: [(&str, Reduction); 8] = [
        ("sum", sum),
        ("max", max),
        ("min", min),
        ("argmax", argmax),
        ("argmin", argmin),
        ("mean", mean),
        ("logsumexp", logsumexp),
        ("softmax", softmax),
    ];
    for (name, op) in cases {
        for axis in [0.0, 1.0] {
            let with = |device: &str| options(&[("axis", axis.into()), ("stream", device.into())]);
            let g = JsFuture::from(op(&x, with("gpu")).unwrap().to_array())
                .await
                .unwrap();
            let c = JsFuture::from(op(&x, with("cpu")).unwrap().to_array())
                .await
                .unwrap();
            let g: Vec<f64> = JsArray::from(&g)
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let c: Vec<f64> = JsArray::from(&c)
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            assert_eq!(g.len(), c.len(), "{name} axis {axis}");
            for (a, b) in g.iter().zip(&c) {
                assert!(
                    (a - b).abs() <= 1e-4 * b.abs().max(1.0),
                    "{name} axis {axis}: {a} on WebGPU, {b} on the CPU"
                );
            }
        }
    }
}

#[wasm_bindgen_test]
async fn matmul_and_creation_ops_on_webgpu() {
    use tandem::js::functions::*;
    runtime_info().await;
    let a = arange(
        0.0.into(),
        70.0.into(),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    )
    .unwrap();
    let a = reshape(&a, floats(&[2.0, 5.0, 7.0]), JsValue::UNDEFINED).unwrap();
    let b = linspace((-1.0).into(), 1.0.into(), 21.into(), JsValue::UNDEFINED).unwrap();
    let b = reshape(&b, floats(&[7.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let on_gpu = to_vec(&matmul(&a, &b, gpu()).unwrap()).await;
    let on_cpu = to_vec(&matmul(&a, &b, cpu()).unwrap()).await;
    assert_eq!(on_gpu.len(), 30);
    for (g, c) in on_gpu.iter().zip(&on_cpu) {
        assert!((g - c).abs() <= 1e-4 * c.abs().max(1.0), "{g} vs {c}");
    }
    let identity = eye(3.into(), JsValue::UNDEFINED).unwrap();
    let m = full(floats(&[3.0, 3.0]), 2.5.into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        to_vec(&matmul(&identity, &m, gpu()).unwrap()).await,
        vec![2.5; 9]
    );
    let ints = arange(
        5.0.into(),
        options(&[("dtype", "int32".into())]),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    )
    .unwrap();
    assert_eq!(ints.dtype().unwrap(), "int32");
    assert_eq!(
        error_name(matmul(&ints, &ints, JsValue::UNDEFINED)),
        "DTypeError"
    );
    let z = zeros(floats(&[2.0, 2.0]), JsValue::UNDEFINED).unwrap();
    let o = ones(floats(&[2.0]), JsValue::UNDEFINED).unwrap();
    assert_eq!(
        to_vec(&add(js_value(&z), js_value(&o), gpu()).unwrap()).await,
        vec![1.0; 4]
    );
}

#[wasm_bindgen_test]
async fn concatenate_stack_and_split_on_webgpu() {
    use tandem::js::functions::*;
    runtime_info().await;
    let a = array(
        floats(&[1.0, 2.0, 3.0, 4.0]),
        options(&[("shape", floats(&[2.0, 2.0]))]),
    )
    .unwrap();
    let b = array(
        floats(&[5.0, 6.0]),
        options(&[("shape", floats(&[2.0, 1.0]))]),
    )
    .unwrap();
    let list: JsValue = JsArray::of2(
        &JsValue::from(a.clone_handle()),
        &JsValue::from(b.clone_handle()),
    )
    .into();
    let joined = concatenate(
        list,
        options(&[("axis", 1.into()), ("stream", "gpu".into())]),
    )
    .unwrap();
    assert_eq!(to_vec(&joined).await, vec![1.0, 2.0, 5.0, 3.0, 4.0, 6.0]);
    let parts = split(&joined, floats(&[2.0]), options(&[("axis", (-1).into())])).unwrap();
    assert_eq!(parts.length(), 2);
    let stacked = stack(
        JsArray::of2(
            &JsValue::from(a.clone_handle()),
            &JsValue::from(a.clone_handle()),
        )
        .into(),
        gpu(),
    )
    .unwrap();
    assert_eq!(stacked.shape().unwrap().length(), 3);
    // The originals are still usable: passing them in a list does not take them.
    assert_eq!(to_vec(&a).await, vec![1.0, 2.0, 3.0, 4.0]);
    let not_arrays: JsValue = JsArray::of1(&JsValue::from_f64(1.0)).into();
    assert_eq!(
        error_name(concatenate(not_arrays, JsValue::UNDEFINED)),
        "ValueError"
    );
}

#[wasm_bindgen_test]
async fn seeded_random_arrays_repeat_and_agree_across_devices() {
    use tandem::js::random::*;
    runtime_info().await;
    let shape = || floats(&[3.0, 5.0]);
    random_seed(42.0).unwrap();
    let first = to_vec(&random_uniform(shape(), gpu()).unwrap()).await;
    let second = to_vec(&random_normal(shape(), gpu()).unwrap()).await;
    random_seed(42.0).unwrap();
    let again = to_vec(&random_uniform(shape(), cpu()).unwrap()).await;
    let normal_again = to_vec(&random_normal(shape(), cpu()).unwrap()).await;
    assert_eq!(
        first, again,
        "the same seed replays the same uniform draws, on either device"
    );
    for (g, c) in second.iter().zip(&normal_again) {
        assert!((g - c).abs() <= 1e-5 * c.abs().max(1.0), "{g} vs {c}");
    }
    assert!(first.iter().all(|v| (0.0..1.0).contains(v)));
    let keyed = options(&[
        ("key", 7.into()),
        ("low", (-3.0).into()),
        ("high", 3.0.into()),
    ]);
    let a = to_vec(&random_uniform(shape(), keyed.clone()).unwrap()).await;
    let b = to_vec(&random_uniform(shape(), keyed).unwrap()).await;
    assert_eq!(a, b, "an explicit key is reproducible without reseeding");
    assert_eq!(
        error_name(
            random_seed(-1.0).map(|_| NdArray::new(tandem::Array::from_f32(&[], &[0]).unwrap()))
        ),
        "ValueError"
    );
}

#[wasm_bindgen_test]
async fn golden_values_match_on_webgpu_and_the_wasm_cpu() {
    let runtime = tandem::Runtime::new(tandem::RuntimeOptions {
        default_device: Some(tandem::Device::Gpu),
        ..Default::default()
    })
    .await
    .unwrap();
    for device in [tandem::Device::Gpu, tandem::Device::Cpu] {
        let failures = crate::golden_cases::run_all(&runtime, device).await;
        assert!(
            failures.is_empty(),
            "{device:?}: {} cases fail:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// MLX's gradients (`tests/golden/grad.json`) through reverse mode on Chromium's WebGPU and
/// the wasm CPU: every case passes and no op lacks a rule.
#[wasm_bindgen_test]
async fn mlx_gradients_match_on_webgpu_and_the_wasm_cpu() {
    let runtime = tandem::Runtime::new(tandem::RuntimeOptions {
        default_device: Some(tandem::Device::Gpu),
        ..Default::default()
    })
    .await
    .unwrap();
    for device in [tandem::Device::Gpu, tandem::Device::Cpu] {
        let (failures, missing) = crate::grad_cases::run_all(&runtime, device).await;
        assert!(
            failures.is_empty(),
            "{device:?}: {} of {} cases fail:\n{}",
            failures.len(),
            crate::grad_cases::count(),
            failures.join("\n")
        );
        let names: Vec<&str> = missing.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            crate::grad_cases::WITHOUT_RULES,
            "{device:?}: {missing:?}"
        );
    }
}

#[wasm_bindgen_test]
async fn numbers_and_booleans_stand_in_for_arrays_weakly_typed() {
    use tandem::js::functions::*;
    runtime_info().await;
    let ints = array(
        js_sys::Int32Array::from(&[1, 2, 3][..]).into(),
        JsValue::UNDEFINED,
    )
    .unwrap();
    let plus_one = add(js_value(&ints), 1.into(), gpu()).unwrap();
    assert_eq!(
        plus_one.dtype().unwrap(),
        "int32",
        "an integral number keeps the array's dtype"
    );
    let half = multiply(js_value(&ints), 0.5.into(), gpu()).unwrap();
    assert_eq!(
        half.dtype().unwrap(),
        "float32",
        "a fraction makes it float32"
    );
    assert_eq!(to_vec(&half).await, vec![0.5, 1.0, 1.5]);
    let flipped = subtract(2.into(), js_value(&ints), cpu()).unwrap();
    let out = JsFuture::from(flipped.to_array()).await.unwrap();
    assert_eq!(
        out.dyn_into::<js_sys::Int32Array>().unwrap().to_vec(),
        vec![1, 0, -1]
    );
    assert_eq!(
        error_name(add("one".into(), js_value(&ints), JsValue::UNDEFINED)),
        "ValueError"
    );
}

#[wasm_bindgen_test]
async fn streams_route_ops_and_evaluate_and_synchronize_resolve() {
    use tandem::js::functions::*;
    use tandem::js::stream::*;
    runtime_info().await;
    let gpu_stream = default_stream("gpu").unwrap();
    assert_eq!(
        (gpu_stream.device(), gpu_stream.index()),
        ("gpu".to_string(), 0)
    );
    let lane = new_stream("cpu").unwrap();
    assert_eq!(lane.device(), "cpu");
    assert!(lane.index() >= 2);
    assert_eq!(
        lane.to_display_string(),
        format!("Stream(cpu, {})", lane.index())
    );
    let a = array(floats(&[1.0, 2.0, 3.0]), JsValue::UNDEFINED).unwrap();
    let b = array(floats(&[10.0, 20.0, 30.0]), JsValue::UNDEFINED).unwrap();
    // MLX's example: c on the CPU, d on the GPU reading c.
    let c = add(
        js_value(&a),
        js_value(&b),
        options(&[("stream", JsValue::from(lane))]),
    )
    .unwrap();
    let d = add(
        js_value(&a),
        js_value(&c),
        options(&[("stream", JsValue::from(gpu_stream))]),
    )
    .unwrap();
    assert_eq!(c.array().unwrap().device(), tandem::Device::Cpu);
    assert_eq!(d.array().unwrap().device(), tandem::Device::Gpu);
    JsFuture::from(evaluate(vec![js_value(&c), js_value(&d)]).unwrap())
        .await
        .unwrap();
    assert!(d.array().unwrap().is_evaluated() && c.array().unwrap().is_evaluated());
    JsFuture::from(synchronize(JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    assert_eq!(to_vec(&d).await, vec![12.0, 24.0, 36.0]);
    set_default_device("cpu").unwrap();
    assert_eq!(default_device_name(), "cpu");
    let e = add(js_value(&a), js_value(&b), JsValue::UNDEFINED).unwrap();
    assert_eq!(e.array().unwrap().device(), tandem::Device::Cpu);
    set_default_device("gpu").unwrap();
    assert_eq!(
        error_name(add(
            js_value(&a),
            js_value(&b),
            options(&[("stream", "npu".into())])
        )),
        "ValueError"
    );
    assert!(new_stream("tpu").is_err());
}
