//! The dtype rules on any input: promotion is a commutative, associative join that never
//! loses a kind, and number conversion and casts never panic and keep what they promise.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::DType;
use tandem::dtype::convert::{cast, from_number};
use tandem::dtype::promote;

fuzz_target!(|data: &[u8]| {
    if data.len() < 11 {
        return;
    }
    let pick = |b: u8| DType::ALL[(b % 4) as usize];
    let (a, b, c) = (pick(data[0]), pick(data[1]), pick(data[2]));
    assert_eq!(promote(a, b), promote(b, a));
    assert_eq!(promote(promote(a, b), c), promote(a, promote(b, c)));
    assert_eq!(promote(a, a), a);
    if a.is_float() || b.is_float() {
        assert!(promote(a, b).is_float());
    }
    let x = f64::from_le_bytes(data[3..11].try_into().unwrap());
    for dtype in DType::ALL {
        let word = from_number(x, dtype);
        // A whole number that the dtype holds converts exactly.
        let exact = match dtype {
            DType::Int32 => x.fract() == 0.0 && (i32::MIN as f64..=i32::MAX as f64).contains(&x),
            DType::Uint32 => x.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&x),
            _ => false,
        };
        if exact {
            let back = if dtype == DType::Int32 {
                word as i32 as f64
            } else {
                word as f64
            };
            assert_eq!(back, x);
        }
        for to in DType::ALL {
            let source = [word];
            let words = cast(&source, dtype, to);
            assert_eq!(words.len(), 1);
            if to == DType::Bool {
                assert!(words[0] <= 1);
            }
        }
    }
});
