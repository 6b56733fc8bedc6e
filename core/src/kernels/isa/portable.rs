//! The portable kernels: a micro-kernel in plain Rust and the row-wise steps without extra features, for every
//! architecture and the `portable` class.

use super::store;
use crate::kernels::{MicroTile, NR};

rowwise!(rowwise);

pub const MR: usize = 4;

/// The portable micro-kernel, which ignores `tile.ahead` (a hint only).
pub unsafe fn micro(tile: MicroTile) {
    let MicroTile { k, a, rows, b, .. } = tile;
    // Rows past `rows` repeat the last real row; their sums are computed and dropped.
    let (row, step) = a.strides();
    // SAFETY: rows below `rows` are the caller's.
    let rp: [*const f32; MR] = std::array::from_fn(|i| unsafe { a.at.add(i.min(rows - 1) * row) });
    let mut acc = [[0.0f32; NR]; MR];
    for p in 0..k {
        // SAFETY: the panel holds `k` rows of NR.
        let bp: &[f32; NR] = unsafe { &*b.add(p * NR).cast::<[f32; NR]>() };
        for i in 0..MR {
            // SAFETY: each row holds `k` values.
            let av = unsafe { *rp[i].add(p * step) };
            for j in 0..NR {
                acc[i][j] += av * bp[j];
            }
        }
    }
    // SAFETY: the caller's contract.
    unsafe { store(&acc, tile) }
}
