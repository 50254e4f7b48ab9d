//! Runs the golden cases of `tests/golden/golden.json` (MLX's results, see its README) through
//! the core API on a device and checks every output. Shared by the native test
//! (`tests/golden.rs`) and the browser tests (`tests/web/kernels.rs`).
#![allow(dead_code)]

use serde_json::Value;
use tandem::dtype::packed;
use tandem::graph::primitive::{BinaryOp, ReduceOp, UnaryOp};
use tandem::ops::{self, SplitAt};
use tandem::{Array, DType, Device, Runtime};

pub const GOLDEN: &str = include_str!("../golden/golden.json");

/// The cases of the golden file.
pub fn cases() -> Vec<Value> {
    let file: Value = serde_json::from_str(GOLDEN).expect("golden.json is valid JSON");
    file["cases"].as_array().expect("a list of cases").clone()
}

/// Runs every case on `device`; returns one line per failing case.
///
/// WGSL lets an adapter flush subnormal floats to zero, and SwiftShader does. On such a
/// device, a case with subnormal inputs or outputs is checked against MLX's semantics applied
/// to flushed data: the CPU kernels (which match MLX on every case) run on the inputs with
/// subnormals made ±0, and results are compared with subnormals made ±0.
pub async fn run_all(runtime: &Runtime, device: Device) -> Vec<String> {
    let flushes = device == Device::Gpu && flushes_subnormals(runtime).await;
    let mut failures = Vec::new();
    for case in cases() {
        let flush = flushes && has_subnormals(&case);
        if let Err(why) = run_case(runtime, &case, device, flush).await {
            let name = case["name"].as_str().unwrap_or("?");
            failures.push(format!("{name} ({}): {why}", case["op"]));
        }
    }
    failures
}

/// Whether the GPU flushes subnormals: it adds 0 to the smallest one.
pub async fn flushes_subnormals(runtime: &Runtime) -> bool {
    let tiny = Array::from_words(vec![1], &[], DType::Float32).unwrap();
    let zero = Array::from_f32(&[0.0], &[]).unwrap();
    let sum = ops::binary(BinaryOp::Add, &tiny, &zero, Device::Gpu).unwrap();
    runtime.read_words(&sum).await.unwrap()[0] == 0
}

fn is_subnormal(word: u32) -> bool {
    word & 0x7f80_0000 == 0 && word & 0x007f_ffff != 0
}

/// The word with a subnormal float made a zero of the same sign.
fn flush_word(word: u32) -> u32 {
    if is_subnormal(word) {
        word & 0x8000_0000
    } else {
        word
    }
}

fn has_subnormals(case: &Value) -> bool {
    let specs = case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .chain(case["outputs"].as_array().unwrap());
    specs.filter(|s| s["dtype"] == "float32").any(|s| {
        words_of(&s["data"], DType::Float32)
            .into_iter()
            .any(is_subnormal)
    })
}

async fn run_case(
    runtime: &Runtime,
    case: &Value,
    device: Device,
    flush: bool,
) -> Result<(), String> {
    let mut inputs: Vec<Array> = case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(array_of)
        .collect();
    if flush {
        inputs = inputs.iter().map(flushed).collect();
    }
    let (op, params) = (case["op"].as_str().unwrap(), &case["params"]);
    let outputs = apply(op, params, &inputs, device).map_err(|e| e.to_string())?;
    let mlx = case["outputs"].as_array().unwrap().clone();
    let expected = if flush {
        reference_on_cpu(runtime, op, params, &inputs).await?
    } else {
        mlx
    };
    if outputs.len() != expected.len() {
        return Err(format!(
            "{} outputs, expected {}",
            outputs.len(),
            expected.len()
        ));
    }
    let (rtol, atol) = tolerance(case, device);
    for (got, want) in outputs.iter().zip(&expected) {
        let dtype = DType::parse(want["dtype"].as_str().unwrap()).unwrap();
        let shape: Vec<usize> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        if got.dtype() != dtype || got.shape() != shape {
            return Err(format!(
                "got {:?} {:?}, expected {dtype:?} {shape:?}",
                got.dtype(),
                got.shape()
            ));
        }
        let stored = runtime
            .read_words(got)
            .await
            .map_err(|e| e.to_string())?
            .to_vec();
        // Packed results compare as their compute dtype's words (exact widenings).
        let n = got.size();
        let mut words = packed::unpack(&stored, dtype, n);
        let mut want_words = packed::unpack(&words_of(&want["data"], dtype), dtype, n);
        let dtype = dtype.compute();
        if flush && dtype == DType::Float32 {
            words = words.into_iter().map(as_flushed_zero).collect();
            want_words = want_words.into_iter().map(as_flushed_zero).collect();
        }
        for (i, (&g, &w)) in words.iter().zip(&want_words).enumerate() {
            if !matches(g, w, dtype, rtol, atol) {
                return Err(format!(
                    "element {i} is {} but MLX gives {}",
                    show(g, dtype),
                    show(w, dtype)
                ));
            }
        }
    }
    Ok(())
}

fn flushed(x: &Array) -> Array {
    if x.dtype() != DType::Float32 {
        return x.clone();
    }
    let words = x
        .storage()
        .unwrap()
        .host_words()
        .unwrap()
        .iter()
        .map(|&w| flush_word(w))
        .collect();
    Array::from_words(words, x.shape(), DType::Float32).unwrap()
}

/// The outputs of the CPU kernels on `inputs`, in the golden file's form.
async fn reference_on_cpu(
    runtime: &Runtime,
    op: &str,
    params: &Value,
    inputs: &[Array],
) -> Result<Vec<Value>, String> {
    let outputs = apply(op, params, inputs, Device::Cpu).map_err(|e| e.to_string())?;
    let mut specs = Vec::new();
    for out in outputs {
        let stored = runtime.read_words(&out).await.map_err(|e| e.to_string())?;
        let words = packed::unpack(&stored, out.dtype(), out.size());
        let data: Vec<Value> = words
            .iter()
            .map(|&w| match out.dtype().compute() {
                DType::Float32 => float_value(f32::from_bits(w)),
                DType::Int32 => Value::from(w as i32),
                DType::Bool => Value::from(w != 0),
                _ => Value::from(w),
            })
            .collect();
        specs.push(
            serde_json::json!({"dtype": out.dtype().name(), "shape": out.shape(), "data": data}),
        );
    }
    Ok(specs)
}

fn float_value(v: f32) -> Value {
    match v {
        v if v.is_nan() => Value::from("nan"),
        f32::INFINITY => Value::from("inf"),
        f32::NEG_INFINITY => Value::from("-inf"),
        v => serde_json::Number::from_f64(v as f64).map_or(Value::Null, Value::Number),
    }
}

/// The case's tolerance, widened on the GPU for the ops where WGSL allows a few ULP
/// (division and square roots: 2.5 ULP) where MLX's CPU is correctly rounded.
fn tolerance(case: &Value, device: Device) -> (f32, f32) {
    let (rtol, atol) = (
        case["rtol"].as_f64().unwrap() as f32,
        case["atol"].as_f64().unwrap() as f32,
    );
    let ulps = matches!(
        case["op"].as_str(),
        Some("divide" | "sqrt" | "rsqrt" | "reciprocal" | "mean")
    );
    if device == Device::Gpu && ulps {
        (rtol.max(1e-6), atol)
    } else {
        (rtol, atol)
    }
}

fn matches(got: u32, want: u32, dtype: DType, rtol: f32, atol: f32) -> bool {
    if dtype != DType::Float32 {
        return got == want;
    }
    let (g, w) = (f32::from_bits(got), f32::from_bits(want));
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if rtol == 0.0 && atol == 0.0 {
        return got == want;
    }
    if g.is_infinite() || w.is_infinite() {
        return g == w;
    }
    (g - w).abs() <= atol + rtol * w.abs()
}

fn show(word: u32, dtype: DType) -> String {
    match dtype {
        DType::Float32 => format!("{:e}", f32::from_bits(word)),
        DType::Int32 => (word as i32).to_string(),
        _ => word.to_string(),
    }
}

/// The storage words of a golden array's data (packed for the packed dtypes; their values
/// are exact in the JSON, so rounding them to the dtype changes nothing).
fn words_of(data: &Value, dtype: DType) -> Vec<u32> {
    let compute = dtype.compute();
    let wide: Vec<u32> = data
        .as_array()
        .unwrap()
        .iter()
        .map(|v| match (v, compute) {
            (Value::Bool(b), _) => u32::from(*b),
            (Value::String(s), _) => match s.as_str() {
                "nan" => f32::NAN.to_bits(),
                "inf" => f32::INFINITY.to_bits(),
                _ => f32::NEG_INFINITY.to_bits(),
            },
            (v, DType::Float32) => (v.as_f64().unwrap() as f32).to_bits(),
            (v, DType::Int32) => v.as_i64().unwrap() as i32 as u32,
            (v, _) => v.as_u64().unwrap() as u32,
        })
        .collect();
    packed::narrow_all(&wide, dtype)
}

pub fn array_of(spec: &Value) -> Array {
    let dtype = DType::parse(spec["dtype"].as_str().unwrap()).unwrap();
    let shape: Vec<usize> = spec["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    Array::from_words(words_of(&spec["data"], dtype), &shape, dtype).unwrap()
}

fn axes(value: &Value) -> Option<Vec<isize>> {
    match value {
        Value::Null => None,
        Value::Array(list) => Some(list.iter().map(|a| a.as_i64().unwrap() as isize).collect()),
        v => Some(vec![v.as_i64().unwrap() as isize]),
    }
}

fn integers(value: &Value) -> Vec<isize> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap() as isize)
        .collect()
}

fn sizes(value: &Value) -> Vec<usize> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect()
}

fn dtype_param(params: &Value, default: DType) -> DType {
    params["dtype"]
        .as_str()
        .map_or(default, |d| DType::parse(d).unwrap())
}

/// A scalar bound typed as the JS layer types it: the array's dtype if that is a float type;
/// else the array's dtype unless the bound has a fraction (then float32).
fn bound(value: &Value, dtype: DType) -> Option<Array> {
    let x = value.as_f64()?;
    let dtype = if !dtype.is_float() && x.fract() != 0.0 {
        DType::Float32
    } else {
        dtype
    };
    let word = tandem::dtype::convert::from_number(x, dtype);
    Some(Array::from_words(vec![word], &[], dtype).unwrap())
}

/// The op of a case, by its JS name, through the core API.
pub fn apply(op: &str, params: &Value, x: &[Array], device: Device) -> tandem::Result<Vec<Array>> {
    let one = |a: tandem::Result<Array>| a.map(|a| vec![a]);
    if let Some(u) = UnaryOp::ALL.iter().find(|u| u.name() == op) {
        return one(ops::unary(*u, &x[0], device));
    }
    if let Some(b) = BinaryOp::ALL.iter().find(|b| b.name() == op) {
        return one(ops::binary(*b, &x[0], &x[1], device));
    }
    let reductions = ReduceOp::ALL;
    let keepdims = params["keepdims"].as_bool().unwrap_or(false);
    if let Some(r) = reductions.iter().find(|r| r.name() == op) {
        return one(ops::reduce(
            *r,
            &x[0],
            axes(&params["axis"]).as_deref(),
            keepdims,
            device,
        ));
    }
    match op {
        "where" => one(ops::where_(&x[0], &x[1], &x[2], device)),
        "clip" => {
            let (lo, hi) = (
                bound(&params["lo"], x[0].dtype()),
                bound(&params["hi"], x[0].dtype()),
            );
            one(ops::clip(&x[0], lo.as_ref(), hi.as_ref(), device))
        }
        "astype" => one(Ok(ops::astype(
            &x[0],
            dtype_param(params, DType::Float32),
            device,
        ))),
        "mean" => one(ops::mean(
            &x[0],
            axes(&params["axis"]).as_deref(),
            keepdims,
            device,
        )),
        "logsumexp" => one(ops::logsumexp(
            &x[0],
            axes(&params["axis"]).as_deref(),
            keepdims,
            device,
        )),
        "softmax" => one(ops::softmax(
            &x[0],
            axes(&params["axis"]).as_deref(),
            device,
        )),
        "matmul" => one(ops::matmul(&x[0], &x[1], device)),
        "var" | "std" => {
            let ddof = params["ddof"].as_u64().unwrap_or(0) as u32;
            let axis = axes(&params["axis"]);
            one(if op == "var" {
                ops::var(&x[0], axis.as_deref(), keepdims, ddof, device)
            } else {
                ops::std(&x[0], axis.as_deref(), keepdims, ddof, device)
            })
        }
        "any" => one(ops::any(
            &x[0],
            axes(&params["axis"]).as_deref(),
            keepdims,
            device,
        )),
        "all" => one(ops::all(
            &x[0],
            axes(&params["axis"]).as_deref(),
            keepdims,
            device,
        )),
        "take" | "takeAlongAxis" => {
            let axis = params["axis"].as_i64().map(|a| a as isize);
            one(if op == "take" {
                ops::take(&x[0], &x[1], axis, device)
            } else {
                ops::take_along_axis(&x[0], &x[1], axis, device)
            })
        }
        "putAlongAxis" => {
            let axis = params["axis"].as_i64().map(|a| a as isize);
            one(ops::put_along_axis(&x[0], &x[1], &x[2], axis, device))
        }
        "sliceUpdate" => one(ops::slice_update(
            &x[0],
            &x[1],
            &integers(&params["start"]),
            &integers(&params["stop"]),
            Some(&integers(&params["strides"])),
            device,
        )),
        "cumsum" | "cumprod" | "cummax" | "cummin" | "logcumsumexp" => {
            use tandem::graph::primitive::ScanOp;
            let scan = [
                ScanOp::Sum,
                ScanOp::Prod,
                ScanOp::Max,
                ScanOp::Min,
                ScanOp::LogAddExp,
            ]
            .into_iter()
            .find(|s| s.name() == op)
            .unwrap();
            let flag = |k: &str, default: bool| params[k].as_bool().unwrap_or(default);
            one(ops::scan(
                scan,
                &x[0],
                params["axis"].as_i64().map(|a| a as isize),
                flag("reverse", false),
                flag("inclusive", true),
                device,
            ))
        }
        "sort" | "argsort" => {
            let axis = params["axis"].as_i64().map(|a| a as isize);
            one(if op == "sort" {
                ops::sort(&x[0], axis, device)
            } else {
                ops::argsort(&x[0], axis, device)
            })
        }
        "topk" => one(ops::topk(
            &x[0],
            params["k"].as_u64().unwrap() as usize,
            params["axis"].as_i64().map(|a| a as isize),
            device,
        )),
        "conv1d" | "conv2d" | "convTranspose1d" | "convTranspose2d" => {
            let spatial = x[0].ndim() - 2;
            let each = |k: &str, default: usize| -> Vec<usize> {
                match &params[k] {
                    Value::Array(list) => {
                        list.iter().map(|v| v.as_u64().unwrap() as usize).collect()
                    }
                    Value::Null => vec![default; spatial],
                    v => vec![v.as_u64().unwrap() as usize; spatial],
                }
            };
            let conv = ops::conv::ConvParams {
                stride: each("stride", 1),
                padding: each("padding", 0),
                dilation: each("dilation", 1),
                groups: params["groups"].as_u64().unwrap_or(1) as usize,
            };
            if op.starts_with("convTranspose") {
                let extra = each("outputPadding", 0);
                return one(ops::conv::conv_transpose(
                    op, &x[0], &x[1], &conv, &extra, device,
                ));
            }
            one(ops::conv::conv(op, &x[0], &x[1], &conv, device))
        }
        "tensordot" => {
            let (ka, kb): (Vec<isize>, Vec<isize>) = match &params["axes"] {
                Value::Array(pair) => (integers(&pair[0]), integers(&pair[1])),
                v => {
                    let n = v.as_u64().unwrap() as isize;
                    let r = x[0].ndim() as isize;
                    ((r - n..r).collect(), (0..n).collect())
                }
            };
            one(ops::tensordot(&x[0], &x[1], &ka, &kb, device))
        }
        "einsum" => one(ops::einsum(
            params["subscripts"].as_str().unwrap(),
            x,
            device,
        )),
        "pad" => {
            let widths: Vec<(usize, usize)> = params["padWidth"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p[0].as_u64().unwrap() as usize,
                        p[1].as_u64().unwrap() as usize,
                    )
                })
                .collect();
            let mode = match params["mode"].as_str() {
                Some("edge") => ops::PadMode::Edge,
                _ => ops::PadMode::Constant(params["constantValues"].as_f64().unwrap_or(0.0)),
            };
            one(ops::pad(&x[0], &widths, mode, device))
        }
        "tile" => one(ops::tile(&x[0], &sizes(&params["reps"]), device)),
        "repeat" => one(ops::repeat(
            &x[0],
            params["repeats"].as_u64().unwrap() as usize,
            params["axis"].as_i64().map(|a| a as isize),
            device,
        )),
        "roll" => {
            let shifts: Vec<i64> = match &params["shift"] {
                Value::Array(list) => list.iter().map(|v| v.as_i64().unwrap()).collect(),
                v => vec![v.as_i64().unwrap()],
            };
            one(ops::roll(
                &x[0],
                &shifts,
                axes(&params["axis"]).as_deref(),
                device,
            ))
        }
        "diag" => one(ops::diag(&x[0], params["k"].as_i64().unwrap(), device)),
        "diagonal" => {
            let n = |k: &str| params[k].as_i64().unwrap();
            one(ops::diagonal(
                &x[0],
                n("offset"),
                n("axis1") as isize,
                n("axis2") as isize,
                device,
            ))
        }
        "rope" => {
            let rope = ops::fast::Rope {
                dims: params["dims"].as_u64().unwrap() as usize,
                traditional: params["traditional"].as_bool().unwrap(),
                base: params["base"].as_f64().unwrap() as f32,
                scale: params["scale"].as_f64().unwrap() as f32,
                offset: params["offset"].as_i64().unwrap(),
            };
            one(ops::fast::rope(&x[0], &rope, device))
        }
        "scaledDotProductAttention" => {
            use ops::fast::AttentionMask;
            let mask = match params["mask"].as_str() {
                Some("causal") => AttentionMask::Causal,
                Some("array") => AttentionMask::Additive(&x[3]),
                Some("boolArray") => AttentionMask::Keep(&x[3]),
                _ => AttentionMask::None,
            };
            let scale = params["scale"].as_f64().unwrap() as f32;
            one(ops::fast::scaled_dot_product_attention(
                &x[0], &x[1], &x[2], scale, mask, device,
            ))
        }
        "layerNorm" | "rmsNorm" => {
            let flag = |k: &str| params[k].as_bool().unwrap_or(false);
            let eps = params["eps"].as_f64().unwrap() as f32;
            let weight = flag("hasWeight").then(|| &x[1]);
            if op == "rmsNorm" {
                return one(ops::fast::rms_norm(&x[0], weight, eps, device));
            }
            let bias = flag("hasBias").then(|| &x[1 + usize::from(flag("hasWeight"))]);
            one(ops::fast::layer_norm(&x[0], weight, bias, eps, device))
        }
        "tril" => one(ops::tril(&x[0], params["k"].as_i64().unwrap(), device)),
        "triu" => one(ops::triu(&x[0], params["k"].as_i64().unwrap(), device)),
        "outer" => one(ops::outer(&x[0], &x[1], device)),
        "addmm" => {
            let factor = |k: &str| params[k].as_f64().unwrap() as f32;
            one(ops::addmm(
                &x[0],
                &x[1],
                &x[2],
                factor("alpha"),
                factor("beta"),
                device,
            ))
        }
        "nanToNum" => {
            let value = |k: &str| params[k].as_f64().map(|v| v as f32);
            one(ops::nan_to_num(
                &x[0],
                value("nan").unwrap_or(0.0),
                value("posinf"),
                value("neginf"),
                device,
            ))
        }
        "reshape" => one(ops::reshape(&x[0], &integers(&params["shape"]), device)),
        "transpose" => one(ops::transpose(
            &x[0],
            axes(&params["axes"]).as_deref(),
            device,
        )),
        "expandDims" => one(ops::expand_dims(
            &x[0],
            &axes(&params["axis"]).unwrap(),
            device,
        )),
        "squeeze" => one(ops::squeeze(
            &x[0],
            axes(&params["axis"]).as_deref(),
            device,
        )),
        "broadcastTo" => one(ops::broadcast_to(&x[0], &sizes(&params["shape"]), device)),
        "flatten" => one(Ok(ops::flatten(&x[0], device))),
        "slice" => one(ops::slice(
            &x[0],
            &integers(&params["start"]),
            &integers(&params["stop"]),
            Some(&integers(&params["strides"])),
            device,
        )),
        "concatenate" => one(ops::concatenate(
            x,
            params["axis"].as_i64().unwrap() as isize,
            device,
        )),
        "stack" => one(ops::stack(
            x,
            params["axis"].as_i64().unwrap() as isize,
            device,
        )),
        "split" => {
            let axis = params["axis"].as_i64().unwrap() as isize;
            let indices;
            let at = match &params["indicesOrSections"] {
                Value::Array(_) => {
                    indices = integers(&params["indicesOrSections"]);
                    SplitAt::Indices(&indices)
                }
                n => SplitAt::Sections(n.as_u64().unwrap() as usize),
            };
            ops::split(&x[0], at, axis, device)
        }
        "arange" => {
            let n = |k: &str| params[k].as_f64().unwrap();
            one(ops::arange(
                n("start"),
                n("stop"),
                n("step"),
                dtype_param(params, DType::Float32),
                device,
            ))
        }
        "linspace" => {
            let n = |k: &str| params[k].as_f64().unwrap();
            one(ops::linspace(
                n("start"),
                n("stop"),
                n("num") as usize,
                dtype_param(params, DType::Float32),
                device,
            ))
        }
        "eye" => one(ops::eye(
            params["n"].as_u64().unwrap() as usize,
            dtype_param(params, DType::Float32),
            device,
        )),
        "zeros" => one(ops::zeros(
            &sizes(&params["shape"]),
            dtype_param(params, DType::Float32),
            device,
        )),
        "ones" => one(ops::ones(
            &sizes(&params["shape"]),
            dtype_param(params, DType::Float32),
            device,
        )),
        "full" => {
            let value = params["value"]
                .as_f64()
                .or_else(|| params["value"].as_bool().map(|b| f64::from(u8::from(b))));
            let default = if params["value"].is_boolean() {
                DType::Bool
            } else {
                DType::Float32
            };
            one(ops::full(
                &sizes(&params["shape"]),
                value.unwrap(),
                dtype_param(params, default),
                device,
            ))
        }
        other => panic!("golden.json names an op the runner does not know: {other}"),
    }
}

/// For comparing flushed results: zeros of either sign (ties between a flushed -0 and +0 in
/// `maximum` may pick either) and flushed subnormals all read as +0.
fn as_flushed_zero(word: u32) -> u32 {
    if word & 0x7f80_0000 == 0 { 0 } else { word }
}
