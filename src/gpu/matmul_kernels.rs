//! The matmul kernels' sources: which kernel runs (`MatmulKernel`, chosen per adapter, and
//! the `Variant` a product's shape and layout allow), and the WGSL of each, with the loads
//! that widen packed operands (`gpu/packed.rs`) and the `vec4` kernel's unrolled tile.

use crate::dtype::DType;
use crate::gpu::device::pipelines::KernelKey;
use crate::gpu::{packed, vectorized};

const WORKGROUP_TILED: &str = include_str!("wgsl/matmul.wgsl");
const REGISTER_TILED: &str = include_str!("wgsl/matmul_registers.wgsl");
const REGISTER_VEC4: &str = include_str!("wgsl/matmul_vec4.wgsl");

/// A register tile: `rows` x 4 `cols4` outputs per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    pub rows: u32,
    pub cols4: u32,
}

/// The two kinds of matmul kernel. Workgroup-memory tiling usually wins on hardware GPUs; on
/// software adapters barriers are expensive and per-thread register tiles win by 2-20x
/// (measured on SwiftShader). Which kind, and which tile, is measured per adapter
/// (`crate::startup::matmul_tuning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatmulKernel {
    WorkgroupTiled,
    /// Register tiles of this size with `vec4` loads when the operands' rows are whole
    /// `vec4`s, else 8 x 4 scalar tiles.
    RegisterTiled(Tile),
}

impl MatmulKernel {
    /// The 8 x 8 register tile, measured best on SwiftShader.
    pub const REGISTERS_8X8: MatmulKernel = MatmulKernel::RegisterTiled(Tile { rows: 8, cols4: 2 });

    /// Every kernel the tuner measures, the likeliest winners first so that it can stop the
    /// slow ones early.
    pub const CANDIDATES: [MatmulKernel; 5] = [
        MatmulKernel::REGISTERS_8X8,
        MatmulKernel::RegisterTiled(Tile { rows: 4, cols4: 2 }),
        MatmulKernel::RegisterTiled(Tile { rows: 8, cols4: 1 }),
        MatmulKernel::RegisterTiled(Tile { rows: 4, cols4: 4 }),
        MatmulKernel::WorkgroupTiled,
    ];

    /// The kernel used before (or without) a measurement: register tiles on a fallback
    /// (software) adapter.
    pub fn for_adapter(is_fallback_adapter: bool) -> MatmulKernel {
        if is_fallback_adapter {
            MatmulKernel::REGISTERS_8X8
        } else {
            MatmulKernel::WorkgroupTiled
        }
    }

    /// A short name for reports: `"registers 8x8"`, `"workgroup 64x64"`.
    pub fn name(self) -> String {
        match self {
            MatmulKernel::WorkgroupTiled => "workgroup 64x64".into(),
            MatmulKernel::RegisterTiled(Tile { rows, cols4 }) => {
                format!("registers {rows}x{}", 4 * cols4)
            }
        }
    }
}

/// One compiled variant: which kernel, and for the `vec4` one its tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    WorkgroupTiled,
    /// 8 x 4 outputs per thread, scalar loads: any shape and offset.
    Scalar,
    /// `rows` x 4 `cols4` outputs per thread; `transposed` operands are read column by
    /// column in place (a transposed view of a row-major matrix: a weight in a backward pass).
    Vec4 {
        rows: u32,
        cols4: u32,
        transposed: [bool; 2],
    },
}

impl Variant {
    /// The variant of `kernel` for `batch` products of (m x k) by (k x n) at these offsets,
    /// batch strides and row strides (in elements; a `transposed` operand's are between its
    /// columns). Only the `vec4` kernel reads a transposed operand, and only where the
    /// dimension it reads along (m for a, n for b) is whole `vec4`s.
    pub fn choose(
        kernel: MatmulKernel,
        [m, n, k]: [usize; 3],
        layout: [usize; 6],
        transposed: [bool; 2],
    ) -> Variant {
        let vec4 = n.is_multiple_of(4)
            && k.is_multiple_of(4)
            && (!transposed[0] || m.is_multiple_of(4))
            && layout.iter().all(|v| v.is_multiple_of(4));
        match kernel {
            MatmulKernel::WorkgroupTiled => Variant::WorkgroupTiled,
            MatmulKernel::RegisterTiled(tile) if vec4 && tile.rows.is_multiple_of(4) => {
                Variant::Vec4 {
                    rows: tile.rows,
                    // A skinny product (n = 4) would leave the rest of a wider tile idle.
                    cols4: if n == 4 { 1 } else { tile.cols4 },
                    transposed,
                }
            }
            MatmulKernel::RegisterTiled(_) => Variant::Scalar,
        }
    }

    /// Whether this variant reads every operand as `transposed` says (the scalar and workgroup
    /// kernels read row-major operands only).
    pub fn reads(self, transposed: [bool; 2]) -> bool {
        match self {
            Variant::Vec4 { transposed: t, .. } => t == transposed,
            _ => transposed == [false, false],
        }
    }

    /// The `vec4` tile's number in its pipeline keys: rows, `vec4` columns, transposes.
    pub(crate) fn tile_code(rows: u32, cols4: u32, [ta, tb]: [bool; 2]) -> u32 {
        rows << 8 | cols4 | u32::from(ta) << 16 | u32::from(tb) << 17
    }

    /// Elements each size and offset parameter counts: 4 for the `vec4` kernel.
    pub(crate) fn unit(self) -> usize {
        match self {
            Variant::Vec4 { .. } => 4,
            _ => 1,
        }
    }

    /// The workgroup grid for `batch` products with an m x n result.
    pub(crate) fn grid(
        self,
        batch: usize,
        m: usize,
        n: usize,
        max: usize,
    ) -> (usize, usize, usize) {
        let numbered = |rows: usize, cols: usize| {
            let groups = (m.div_ceil(rows) * n.div_ceil(cols)).div_ceil(64);
            let x = groups.min(max);
            (x, groups.div_ceil(x), batch)
        };
        match self {
            // 16 x 16 threads, each a 4 x 4 block.
            Variant::WorkgroupTiled => (n.div_ceil(64), m.div_ceil(64), batch),
            // 64 threads, each a block, numbered across an x * y grid.
            Variant::Scalar => numbered(8, 4),
            Variant::Vec4 { rows, cols4, .. } => numbered(rows as usize, 4 * cols4 as usize),
        }
    }

    pub(crate) fn pipeline_key(self, dtypes: Dtypes) -> KernelKey {
        let (kernel, variant) = match self {
            Variant::WorkgroupTiled => ("matmul_workgroup", 0),
            Variant::Scalar => ("matmul_registers", 0),
            Variant::Vec4 {
                rows,
                cols4,
                transposed,
            } => ("matmul_vec4", Variant::tile_code(rows, cols4, transposed)),
        };
        KernelKey::new(kernel, "", &[dtypes.a, dtypes.b, dtypes.out]).variant(variant)
    }

    /// The kernel's source for operands and an output of `dtypes` (only the `vec4` kernel
    /// stores a packed output).
    pub fn source(self, dtypes: Dtypes) -> String {
        let helpers = packed::source_for(&[dtypes.a, dtypes.b, dtypes.out], "");
        let loads = operands_text(dtypes, matches!(self, Variant::Vec4 { .. }));
        let kernel = match self {
            Variant::WorkgroupTiled => WORKGROUP_TILED.to_string(),
            Variant::Scalar => REGISTER_TILED.to_string(),
            Variant::Vec4 {
                rows,
                cols4,
                transposed,
            } => {
                let store = vectorized::output_text(3, dtypes.out, "f32");
                format!("{store}{}", vec4_text(rows, cols4, transposed, false))
            }
        };
        format!("{helpers}\n{loads}{kernel}")
    }
}

/// The dtypes a matmul kernel reads and stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtypes {
    pub a: DType,
    pub b: DType,
    pub out: DType,
}

/// The bindings of `a` and `b` and their loads, widening a packed operand in place:
/// `fn load_a4(i)` (`vec4` i) for the `vec4` kernel, `fn load_a(i)` (element i) for the
/// others; the same for `b`.
pub(crate) fn operands_text(dtypes: Dtypes, vec4: bool) -> String {
    let mut text = String::new();
    for (binding, (name, dtype)) in [("a", dtypes.a), ("b", dtypes.b)].into_iter().enumerate() {
        let (element, load) = match vec4 {
            true => (
                packed::storage4(dtype),
                format!(
                    "fn load_{name}4(i: u32) -> vec4<f32> {{ return {}; }}",
                    packed::widen4(dtype, &format!("{name}[i]"))
                ),
            ),
            false => (
                (if dtype.is_packed() { "u32" } else { "f32" }).to_string(),
                format!(
                    "fn load_{name}(i: u32) -> f32 {{ return {}; }}",
                    packed::element(dtype, name, "i")
                ),
            ),
        };
        text += &format!(
            "@group(0) @binding({}) var<storage, read> {name}: array<{element}>;\n{load}\n",
            binding + 1
        );
    }
    text
}

/// `matmul_vec4.wgsl` for a `rows` x `cols4` tile, its markers filled with the tile unrolled;
/// with `epilogue`, each stored `vec4` goes through `fn epilogue(v, value)` first (see
/// `epilogue.rs`). The caller declares the operands and the output's `fn store`.
///
/// A row-major a gives each step a `vec4` of four k along each row; a transposed one a `vec4`
/// of four rows along each of the four k. A row-major b gives a `vec4` of columns on each of
/// the four k rows; a transposed one a `vec4` of four k down each column, regrouped in
/// registers into the same `vec4`s of columns. Either way a step makes the same `fma`s.
pub(crate) fn vec4_text(rows: u32, cols4: u32, [ta, tb]: [bool; 2], epilogue: bool) -> String {
    let tile = || (0..rows).flat_map(|i| (0..cols4).map(move |j| (i, j)));
    let lanes = ["x", "y", "z", "w"];
    let mut declare = String::new();
    let mut step = String::new();
    match ta {
        false => {
            for i in 0..rows {
                declare += &format!(
                    "let a{i} = a_base + min(row0 + {i}u, params.m - 1u) * params.lda4;\n"
                );
                step += &format!("let av{i} = load_a4(a{i} + kk);\n");
            }
        }
        true => {
            for g in 0..rows / 4 {
                declare +=
                    &format!("let a{g} = a_base + min(row0 / 4u + {g}u, params.m / 4u - 1u);\n");
                for r in 0..4 {
                    step += &format!(
                        "let av{r}_{g} = load_a4(a{g} + (4u * kk + {r}u) * params.lda4);\n"
                    );
                }
            }
        }
    }
    for j in 0..cols4 {
        match tb {
            false => {
                declare += &format!("let b{j} = b_base + min(col0 + {j}u, params.n4 - 1u);\n");
                for r in 0..4 {
                    step += &format!("let bv{r}_{j} = load_b4(b{j} + kb + {r}u * params.ldb4);\n");
                }
            }
            true => {
                for c in 0..4 {
                    declare += &format!(
                        "let b{j}_{c} = b_base + min(4u * (col0 + {j}u) + {c}u, 4u * params.n4 - 1u) * params.ldb4;\n"
                    );
                    step += &format!("let bw{j}_{c} = load_b4(b{j}_{c} + kk);\n");
                }
                for (r, lane) in lanes.iter().enumerate() {
                    step += &format!(
                        "let bv{r}_{j} = vec4<f32>(bw{j}_0.{lane}, bw{j}_1.{lane}, bw{j}_2.{lane}, bw{j}_3.{lane});\n"
                    );
                }
            }
        }
    }
    for (i, j) in tile() {
        declare += &format!("var acc{i}_{j} = vec4<f32>(0.0);\n");
    }
    // Element (row i, k r) of a's step.
    let a_at = |i: u32, r: usize| match ta {
        false => format!("av{i}.{}", lanes[r]),
        true => format!("av{r}_{}.{}", i / 4, lanes[(i % 4) as usize]),
    };
    for r in 0..4 {
        for (i, j) in tile() {
            let a = a_at(i, r);
            step += &format!("acc{i}_{j} = fma(vec4<f32>({a}), bv{r}_{j}, acc{i}_{j});\n");
        }
    }
    let mut store = String::new();
    for (i, j) in tile() {
        let at = format!("out_base + (row0 + {i}u) * params.n4 + col0 + {j}u");
        let value = if epilogue {
            format!("epilogue({at}, acc{i}_{j})")
        } else {
            format!("acc{i}_{j}")
        };
        store += &format!(
            "if (row0 + {i}u < params.m && col0 + {j}u < params.n4) {{ store({at}, {value}); }}\n"
        );
    }
    format!("const TM: u32 = {rows}u;\nconst TN4: u32 = {cols4}u;\n{REGISTER_VEC4}")
        .replace("//{DECLARE}", &declare)
        .replace("//{STEP}", &step)
        .replace("//{STORE}", &store)
}
