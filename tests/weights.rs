//! Weights files: safetensors and `.npy` written by Python (`tests/weights/python/`, made by
//! `tests/weights/make_fixtures.py`) load with their exact bits, malformed files are typed
//! errors naming the problem, what tandem writes is committed in `tests/weights/tandem/`
//! (which `check_tandem.py` reads with Python), and random bytes never panic the parsers.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{gpu_runtime, runner, words};
use proptest::prelude::*;
use serde_json::Value;
use tandem::dtype::packed;
use tandem::weights::loader::{Loaded, Options};
use tandem::weights::{Loader, file_bytes, npy, safetensors};
use tandem::{Array, DType, Device, Runtime};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/weights");

fn expected() -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/python/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/python/{name}")).unwrap()
}

fn options(total: Option<u64>) -> Options {
    Options {
        dtype: None,
        device: Device::Cpu,
        total,
    }
}

/// Feeds `bytes` to a loader `chunk` bytes at a time and finishes it.
fn load(bytes: &[u8], chunk: usize, opts: Options) -> tandem::Result<(Vec<Loaded>, Loader)> {
    let mut loader = Loader::new(opts);
    let mut loaded = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        loaded.extend(loader.feed(piece)?);
    }
    if bytes.is_empty() {
        loaded.extend(loader.feed(&[])?);
    }
    loaded.extend(loader.finish()?);
    Ok((loaded, loader))
}

/// An array's elements as their bits (bool as 0/1), row-major.
fn element_bits(runtime: &Runtime, a: &Array) -> Vec<u64> {
    let w = words(runtime, a);
    (0..a.size())
        .map(|i| u64::from(packed::bits(&w, a.dtype(), i)))
        .collect()
}

fn ints(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn python_files_load_with_their_exact_bits_in_any_chunking() {
    let runtime = gpu_runtime();
    let all = expected();
    for file in all["files"].as_array().unwrap() {
        let name = file["file"].as_str().unwrap();
        let bytes = fixture(name);
        for chunk in [1, 7, 64, bytes.len()] {
            for total in [None, Some(bytes.len() as u64)] {
                let (loaded, loader) = load(&bytes, chunk, options(total))
                    .unwrap_or_else(|e| panic!("{name} in chunks of {chunk}: {}", e.message()));
                let tensors: Vec<&Value> = all["tensors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|t| t["file"] == name)
                    .collect();
                assert_eq!(loaded.len(), tensors.len(), "{name}");
                for t in tensors {
                    let got = loaded
                        .iter()
                        .find(|l| l.name == t["name"] || loaded.len() == 1)
                        .unwrap_or_else(|| panic!("{name}: no tensor {}", t["name"]));
                    let what = format!("{name} {} in chunks of {chunk}", t["name"]);
                    assert_eq!(got.array.dtype().name(), t["dtype"], "{what}");
                    let shape: Vec<usize> = ints(&t["shape"]).iter().map(|&d| d as usize).collect();
                    assert_eq!(got.array.shape(), shape, "{what}");
                    assert_eq!(
                        element_bits(&runtime, &got.array),
                        ints(&t["bits"]),
                        "{what}"
                    );
                }
                if let Some(meta) = file["metadata"].as_object() {
                    let want: Vec<(String, String)> = meta
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                        .collect();
                    let mut got = loader.metadata().to_vec();
                    got.sort();
                    assert_eq!(got, want, "{name} metadata");
                }
            }
        }
    }
}

#[test]
fn malformed_files_are_typed_errors_that_name_the_problem() {
    for case in expected()["errors"].as_array().unwrap() {
        let name = case["file"].as_str().unwrap();
        let bytes = fixture(name);
        for (chunk, total) in [
            (bytes.len(), None),
            (5, None),
            (bytes.len(), Some(bytes.len())),
        ] {
            let total = total.map(|t| t as u64);
            let Err(err) = load(&bytes, chunk, options(total)) else {
                panic!("{name} loaded");
            };
            assert_eq!(err.kind(), case["error"], "{name}: {}", err.message());
            for mention in case["mentions"].as_array().unwrap() {
                let mention = mention.as_str().unwrap();
                assert!(err.message().contains(mention), "{name}: {}", err.message());
            }
        }
    }
}

/// The tensors of the Python files as tandem writes them: `all.safetensors` (every tensor of
/// both safetensors fixtures, prefixed `np_` and `mlx_`) and one `.npy` per `.npy` fixture.
fn tandem_files(runtime: &Runtime) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut entries = Vec::new();
    for (file, prefix) in [("numpy.safetensors", "np_"), ("mlx.safetensors", "mlx_")] {
        let (loaded, _) = load(&fixture(file), 1 << 20, options(None)).unwrap();
        for t in loaded {
            entries.push((format!("{prefix}{}", t.name), t.array));
        }
    }
    let list: Vec<safetensors::Entry> = entries
        .iter()
        .map(|(name, a)| safetensors::Entry::of(name, a, &words(runtime, a)))
        .collect();
    let metadata = [("written_by".to_string(), "tandem".to_string())];
    files.push((
        "all.safetensors".into(),
        safetensors::write(&list, &metadata).unwrap(),
    ));
    for file in expected()["files"].as_array().unwrap() {
        let name = file["file"].as_str().unwrap();
        if file["format"] != "npy" || name == "mlx_bf16.npy" {
            continue;
        }
        let (loaded, _) = load(&fixture(name), 1 << 20, options(None)).unwrap();
        let a = &loaded[0].array;
        let bytes = file_bytes(&words(runtime, a), a.dtype(), a.size());
        files.push((
            name.to_string(),
            npy::write(a.dtype(), a.shape(), &bytes).unwrap(),
        ));
    }
    files
}

#[test]
fn tandem_writes_the_committed_files_and_reads_them_back() {
    let runtime = gpu_runtime();
    let files = tandem_files(&runtime);
    let dir = format!("{DIR}/tandem");
    if std::env::var_os("TANDEM_WRITE_FIXTURES").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in &files {
            std::fs::write(format!("{dir}/{name}"), bytes).unwrap();
        }
    }
    for (name, bytes) in &files {
        let committed = std::fs::read(format!("{dir}/{name}"))
            .unwrap_or_else(|_| panic!("{dir}/{name}: run with TANDEM_WRITE_FIXTURES=1"));
        assert!(
            &committed == bytes,
            "{name} differs from what tandem writes now"
        );
        // And what tandem wrote, it reads with the same bits.
        let (again, _) = load(bytes, 13, options(Some(bytes.len() as u64))).unwrap();
        assert!(!again.is_empty() || name.contains("empty"), "{name}");
    }
}

#[test]
fn a_file_past_the_memory_limit_fails_at_its_header_and_allocates_nothing() {
    use tandem::memory::{Scope, allocator, stats};
    let active = || stats().active_bytes.get(Scope::All).current;
    let before = active();
    let bytes = fixture("numpy.safetensors");
    allocator::set_memory_limit(Some(before + 64));
    let mut loader = Loader::new(options(None));
    // The header alone arrives: the tensors need 96 bytes as stored.
    let header_end = 8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let err = loader
        .feed(&bytes[..header_end])
        .err()
        .expect("past the limit");
    assert_eq!(err.kind(), "MemoryLimitError", "{}", err.message());
    assert_eq!(active(), before);
    allocator::set_memory_limit(None);
}

#[test]
fn float_tensors_convert_to_the_requested_dtype_and_others_keep_theirs() {
    let runtime = gpu_runtime();
    let opts = Options {
        dtype: Some(DType::BFloat16),
        ..options(None)
    };
    let (loaded, _) = load(&fixture("numpy.safetensors"), 1 << 20, opts).unwrap();
    for t in &loaded {
        let want = match t.name.as_str() {
            "i32" => DType::Int32,
            "u32" => DType::Uint32,
            "i8" => DType::Int8,
            "u8" => DType::Uint8,
            "bool" => DType::Bool,
            _ => DType::BFloat16,
        };
        assert_eq!(t.array.dtype(), want, "{}", t.name);
    }
    let f32 = loaded.iter().find(|t| t.name == "f32").unwrap();
    let bits = element_bits(&runtime, &f32.array);
    // NaN, the least subnormal (0 in bfloat16), float32's max (inf in bfloat16), -0.
    assert_eq!(bits[2], 0x7f80);
    assert_eq!(bits[3], 0x8000);
}

#[test]
fn a_tensor_placed_on_the_gpu_keeps_one_copy() {
    use tandem::memory::{Scope, stats};
    let runtime = gpu_runtime();
    let gpu = |s: &tandem::memory::Stats| s.active_bytes.get(Scope::Gpu).current;
    let cpu = |s: &tandem::memory::Stats| s.active_bytes.get(Scope::Cpu).current;
    let before = stats();
    let (loaded, _) = load(&fixture("f16.npy"), 1 << 20, options(None)).unwrap();
    let a = &loaded[0].array;
    pollster::block_on(runtime.place(a, Device::Gpu)).unwrap();
    let storage = a.storage().unwrap();
    assert!(storage.on_gpu() && !storage.on_host());
    let after = stats();
    assert_eq!(cpu(&after), cpu(&before));
    assert!(gpu(&after) > gpu(&before));
    // Four float16 elements: 8 bytes, read back from the GPU with their bits.
    assert_eq!(
        element_bits(&runtime, a),
        ints(&expected()["tensors"][15]["bits"])
    );
}

/// Loads `bytes` and requires success or a typed error of the kinds a malformed file gives.
fn typed(bytes: &[u8], chunk: usize, total: Option<u64>) -> Result<(), TestCaseError> {
    if let Err(err) = load(bytes, chunk, options(total)) {
        prop_assert!(
            matches!(err.kind(), "ValueError" | "DTypeError" | "MemoryLimitError"),
            "{}: {}",
            err.kind(),
            err.message()
        );
    }
    Ok(())
}

#[test]
fn random_bytes_and_mutated_headers_never_panic() {
    let seeds = [
        "numpy.safetensors",
        "mlx.safetensors",
        "f32.npy",
        "f32_fortran.npy",
    ];
    let files: Vec<Vec<u8>> = seeds.iter().map(|f| fixture(f)).collect();
    let cases = (
        0..files.len(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        any::<prop::sample::Index>(),
        1usize..40,
        any::<bool>(),
    );
    runner(3000)
        .run(&cases, |(k, edits, cut, chunk, known)| {
            let mut bytes = files[k].clone();
            // Most edits land in the header, where the parsing is.
            let header = 200.min(bytes.len());
            for (at, value) in edits {
                let i = at.index(header);
                bytes[i] = value;
            }
            if cut.index(4) == 0 {
                bytes.truncate(cut.index(bytes.len() + 1));
            }
            let total = known.then_some(bytes.len() as u64);
            typed(&bytes, chunk, total)
        })
        .unwrap();
    let noise = (
        prop::collection::vec(any::<u8>(), 0..300),
        0usize..3,
        1usize..50,
    );
    runner(3000)
        .run(&noise, |(mut bytes, prefix, chunk)| {
            // Random bytes after each format's opening, so the parsers see them.
            let opening: &[u8] = match prefix {
                0 => b"",
                1 => b"\x93NUMPY\x01\x00",
                _ => b"\x20\x00\x00\x00\x00\x00\x00\x00{",
            };
            bytes.splice(0..0, opening.iter().copied());
            typed(&bytes, chunk, None)
        })
        .unwrap();
}
