//! The fused programs against their ops run one by one: the general path, and the plans of
//! `lanes.rs` (bit for bit, over chunks that end mid-row and mid-vector).

use super::lanes::{KEPT_STEPS, Plan};
use super::*;
use crate::graph::primitive::{BinaryOp, UnaryOp};

/// A float32 operand of `words` with `strides`.
fn operand<'a>(words: &'a [u32], strides: &'a [isize]) -> Operand<'a> {
    Operand {
        words,
        dtype: DType::Float32,
        strides,
        offset: 0,
    }
}

#[test]
fn a_program_matches_its_ops_run_one_by_one_over_chunks_and_strides() {
    // exp(x) * y + 2, x transposed (3000 x 2 read from a 2 x 3000 storage), y one element.
    let shape = [3000, 2];
    let x: Vec<u32> = (0..6000)
        .map(|i| ((i as f32) * 0.001 - 3.0).to_bits())
        .collect();
    let (y, two) = ([1.5f32.to_bits()], [2f32.to_bits()]);
    let expr = FusedExpr {
        steps: vec![
            Step::Input(0),
            Step::Unary(UnaryOp::Exp, 0),
            Step::Input(1),
            Step::Binary(BinaryOp::Multiply, 1, 2),
            Step::Input(2),
            Step::Binary(BinaryOp::Add, 3, 4),
        ],
        dtypes: vec![DType::Float32; 6],
    };
    let (xs, zero) = ([1isize, 3000], [0isize, 0]);
    let inputs = [operand(&x, &xs), operand(&y, &zero), operand(&two, &zero)];
    let got = fused(&expr, &shape, &inputs).unwrap();
    let e = unary::unary(UnaryOp::Exp, DType::Float32, &shape, operand(&x, &xs)).unwrap();
    let p = binary::binary(
        BinaryOp::Multiply,
        DType::Float32,
        &shape,
        operand(&e, &[2, 1]),
        operand(&y, &zero),
    );
    let want = binary::binary(
        BinaryOp::Add,
        DType::Float32,
        &shape,
        operand(&p, &[2, 1]),
        operand(&two, &zero),
    );
    assert_eq!(got, want);
}

fn floats(n: usize, seed: u32) -> Vec<u32> {
    (0..n)
        .map(|i| {
            let v = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) % 4001;
            (v as f32 / 1000.0 - 2.0).to_bits()
        })
        .collect()
}

#[test]
fn a_planned_program_matches_its_ops_one_by_one_bit_for_bit() {
    // log2(|relu(x + bias) * 0.5 - y| + e^0.5), over [3, 1001]: chunks of 2048 that end
    // mid-row and mid-vector, a bias row repeated, a splat chain (e^0.5) and a float64 op.
    let shape = [3, 1001];
    let (x, y, bias) = (floats(3003, 1), floats(3003, 2), floats(1001, 3));
    let (half, dense, row, splat) = ([0.5f32.to_bits()], [1001, 1], [0, 1], [0, 0]);
    let expr = FusedExpr {
        steps: vec![
            Step::Input(0),
            Step::Input(1),
            Step::Binary(BinaryOp::Add, 0, 1),
            Step::Unary(UnaryOp::Relu, 2),
            Step::Input(2),
            Step::Binary(BinaryOp::Multiply, 3, 4),
            Step::Input(3),
            Step::Binary(BinaryOp::Subtract, 5, 6),
            Step::Unary(UnaryOp::Abs, 7),
            Step::Unary(UnaryOp::Exp, 4),
            Step::Binary(BinaryOp::Add, 8, 9),
            Step::Unary(UnaryOp::Log2, 10),
        ],
        dtypes: vec![DType::Float32; 12],
    };
    let inputs = [
        operand(&x, &dense),
        operand(&bias, &row),
        operand(&half, &splat),
        operand(&y, &dense),
    ];
    assert!(Plan::new(&expr, &shape, &inputs, false).is_some());
    let got = fused(&expr, &shape, &inputs).unwrap();

    let f32 = DType::Float32;
    let bin = |op, a: &[u32], sa: &[isize], b: &[u32], sb: &[isize]| {
        binary::binary(op, f32, &shape, operand(a, sa), operand(b, sb))
    };
    let un = |op, a: &[u32], sa: &[isize]| unary::unary(op, f32, &shape, operand(a, sa)).unwrap();
    let sum = bin(BinaryOp::Add, &x, &dense, &bias, &row);
    let relu = un(UnaryOp::Relu, &sum, &dense);
    let scaled = bin(BinaryOp::Multiply, &relu, &dense, &half, &splat);
    let diff = bin(BinaryOp::Subtract, &scaled, &dense, &y, &dense);
    let abs = un(UnaryOp::Abs, &diff, &dense);
    let e = un(UnaryOp::Exp, &half, &splat);
    let total = bin(BinaryOp::Add, &abs, &dense, &e, &splat);
    let want = un(UnaryOp::Log2, &total, &dense);
    assert_eq!(got, want);

    // The same program in place over a block of rows from row 1 on: input 0 is the block.
    let mut block = x[1001..].to_vec();
    InPlace::new(&expr, &shape, &inputs)
        .run(1001, &mut block)
        .unwrap();
    assert_eq!(block, want[1001..]);
}

#[test]
fn a_program_longer_than_the_kept_scratch_runs_and_lets_it_go() {
    // x + x + ... (40 steps): exact in float32 for small integers.
    let steps = KEPT_STEPS + 8;
    let mut program = vec![Step::Input(0)];
    program.extend((0..steps - 1).map(|i| Step::Binary(BinaryOp::Add, i, 0)));
    let expr = FusedExpr {
        dtypes: vec![DType::Float32; program.len()],
        steps: program,
    };
    let x: Vec<u32> = (0..5000).map(|i| ((i % 7) as f32).to_bits()).collect();
    let dense = [1isize];
    for _ in 0..2 {
        let got = fused(&expr, &[5000], &[operand(&x, &dense)]).unwrap();
        let want: Vec<u32> = (0..5000)
            .map(|i| (((i % 7) * steps) as f32).to_bits())
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn gathered_inputs_and_selects_take_the_general_path() {
    let shape = [4, 8];
    let x = floats(32, 4);
    let add = FusedExpr {
        steps: vec![
            Step::Input(0),
            Step::Input(1),
            Step::Binary(BinaryOp::Add, 0, 1),
        ],
        dtypes: vec![DType::Float32; 3],
    };
    let (dense, transposed) = ([8isize, 1], [1isize, 4]);
    let both = [operand(&x, &dense), operand(&x, &dense)];
    assert!(Plan::new(&add, &shape, &both, false).is_some());
    let gathered = [operand(&x, &dense), operand(&x, &transposed)];
    assert!(Plan::new(&add, &shape, &gathered, false).is_none());
    let select = FusedExpr {
        steps: vec![Step::Input(0), Step::Input(1), Step::Where(0, 1, 1)],
        dtypes: vec![DType::Bool, DType::Float32, DType::Float32],
    };
    assert!(Plan::new(&select, &shape, &both, false).is_none());
    let compare = FusedExpr {
        steps: vec![
            Step::Input(0),
            Step::Input(1),
            Step::Binary(BinaryOp::Less, 0, 1),
        ],
        dtypes: vec![DType::Float32, DType::Float32, DType::Bool],
    };
    assert!(Plan::new(&compare, &shape, &both, false).is_none());
}
