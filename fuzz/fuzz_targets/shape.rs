//! The shape arithmetic on any input: element counts, broadcasting, axes and slices never
//! panic or overflow, and what they return is consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem::graph::shape::{
    broadcast_shapes, checked_size, contiguous_strides, normalize_axes, normalize_axis,
    normalize_slice_axis,
};

/// Sizes from the bytes: mostly small, sometimes 0 or huge.
fn sizes(bytes: &[u8]) -> Vec<usize> {
    bytes
        .iter()
        .take(6)
        .map(|&b| match b {
            250 => usize::MAX,
            251 => 1 << 40,
            252 => u32::MAX as usize,
            253 => 1 << 31,
            _ => (b % 9) as usize,
        })
        .collect()
}

fn isize_from(bytes: &[u8]) -> isize {
    let mut word = [0u8; 8];
    let n = bytes.len().min(8);
    word[..n].copy_from_slice(&bytes[..n]);
    i64::from_le_bytes(word) as isize
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 26 {
        return;
    }
    let (a, b) = (sizes(&data[0..6]), sizes(&data[6..12]));
    let (a, b) = (&a[..(data[24] % 7) as usize], &b[..(data[25] % 7) as usize]);
    if let Ok(count) = checked_size("fuzz", a) {
        assert_eq!(count as u128, a.iter().map(|&d| d as u128).product::<u128>());
        let strides = contiguous_strides(a);
        assert_eq!(strides.len(), a.len());
    }
    if let Ok(shape) = broadcast_shapes("fuzz", a, b) {
        assert_eq!(shape.len(), a.len().max(b.len()));
        checked_size("fuzz", &shape).expect("a broadcast shape that was returned fits");
        for (i, &d) in shape.iter().rev().enumerate() {
            for s in [a, b] {
                if let Some(&e) = s.iter().rev().nth(i) {
                    assert!(e == d || e == 1, "{a:?} and {b:?} gave {shape:?}");
                }
            }
        }
    }
    let (start, stop, step) = (
        isize_from(&data[12..16]),
        isize_from(&data[16..20]),
        isize_from(&data[20..24]),
    );
    let n = a.first().copied().unwrap_or(0).min(1 << 20);
    if step != 0 {
        let (first, len) = normalize_slice_axis(n, start, stop, step);
        if len > 0 {
            let last = first as i128 + (len as i128 - 1) * step as i128;
            assert!(first < n && (0..n as i128).contains(&last), "{n} {start} {stop} {step}");
        }
    }
    let ndim = a.len();
    if let Ok(axis) = normalize_axis("fuzz", start, ndim) {
        assert!(axis < ndim);
    }
    if let Ok(axes) = normalize_axes("fuzz", &[start, stop], ndim) {
        assert!(axes.iter().all(|&x| x < ndim));
    }
});
