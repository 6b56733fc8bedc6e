//! The x86-64 kernels: the AVX-512 micro-kernel (12 rows × 32 columns, with 8- and 4-row forms) and the AVX2 one
//! (3 rows × 32 columns), each fusing every multiply-add, and the row-wise steps compiled for AVX2 and AVX-512.

use super::store;
use crate::kernels::{Ahead, MicroTile, NR};
use std::arch::x86_64::*;

rowwise!(rowwise_avx2, "avx2,fma");
rowwise!(rowwise_avx512, "avx512f,avx2,fma");

pub const AVX512_MR: usize = 12;
/// How many rows of the panel ahead the AVX-512 kernel prefetches.
const PREFETCH: usize = 32;
pub const AVX2_MR: usize = 3;

/// Asks `ahead`'s lines into L2 evenly over a call's `k` steps, at most two a step (Bresenham's count), so
/// that the requests stay few in flight beside the panel's own loads.
struct Spread {
    ahead: Ahead,
    owed: usize,
    next: usize,
}

impl Spread {
    #[inline(always)]
    fn new(ahead: Ahead) -> Spread {
        Spread { ahead, owed: 0, next: 0 }
    }

    #[inline(always)]
    fn step(&mut self, k: usize) {
        self.owed += self.ahead.lines;
        for _ in 0..2 {
            if self.owed >= k {
                self.owed -= k;
                // SAFETY: a prefetch is a hint and never faults, whatever the address.
                unsafe { _mm_prefetch::<_MM_HINT_T1>(self.ahead.at.wrapping_add(self.next * 16).cast()) };
                self.next += 1;
            }
        }
    }
}

/// Runs a kernel's `$step!(p)` for every step `p` of `$k`, asking `$ahead`'s lines into L2 meanwhile ([`Spread`]),
/// in two loops, so that a call with nothing to ask ahead pays nothing for it. A macro, so that each kernel's own
/// `step!` (which adds into its register sums) expands in the loop as written.
macro_rules! steps {
    ($k:expr, $ahead:expr, $step:ident) => {
        if $ahead.lines == 0 {
            for p in 0..$k {
                $step!(p);
            }
        } else {
            let mut spread = Spread::new($ahead);
            for p in 0..$k {
                spread.step($k);
                $step!(p);
            }
        }
    };
}

/// The AVX-512 micro-kernel: up to [`AVX512_MR`] rows, each call run by the narrowest of the 12-, 8- and 4-row
/// forms that holds its rows, so that a last block of few rows does not pay for twelve.
#[target_feature(enable = "avx512f,avx2,fma")]
pub unsafe fn micro_avx512(tile: MicroTile) {
    macro_rules! form {
        ($mr:literal) => {
            match (tile.a.columns, tile.rows == $mr) {
                (false, _) => micro_avx512_rows::<$mr, BY_ROWS>(tile),
                (true, true) => micro_avx512_rows::<$mr, WHOLE_COLUMNS>(tile),
                (true, false) => micro_avx512_rows::<$mr, COLUMNS>(tile),
            }
        };
    }
    // SAFETY: the caller's contract in `Kernels::micro`, with `rows` within each form's.
    unsafe {
        match tile.rows {
            9.. => form!(12),
            5..=8 => form!(8),
            _ => form!(4),
        }
    }
}

/// How [`micro_avx512_rows`] reads A: by rows; by columns ([`crate::kernels::Lhs::columns`]); or by columns with
/// every one of the form's rows real, so that a step's `MR` values are read at fixed offsets from one pointer.
const BY_ROWS: u8 = 0;
const COLUMNS: u8 = 1;
const WHOLE_COLUMNS: u8 = 2;
/// How many steps of `k` ahead the kernel asks for A's values when it reads them by columns, one line a step
/// `ld` floats apart, which the hardware's prefetchers do not follow across pages.
const COLUMNS_AHEAD: usize = 16;

/// [`micro_avx512`]'s form of `MR` rows (`rows` ≤ `MR`): `2·MR` zmm sums, two loads of the panel and `MR`
/// broadcasts per step of `k`.
#[target_feature(enable = "avx512f,avx2,fma")]
#[inline]
unsafe fn micro_avx512_rows<const MR: usize, const READ: u8>(tile: MicroTile) {
    let MicroTile { k, a, rows, b, c, ldc, cols, accumulate, ahead } = tile;
    // SAFETY: (whole body) the caller's contract in `Kernels::micro`.
    unsafe {
        let (row, step) = match READ {
            BY_ROWS => (a.ld, 1),
            _ => (1, a.ld),
        };
        let rp: [*const f32; MR] =
            std::array::from_fn(|i| a.at.add(if READ == WHOLE_COLUMNS { i } else { i.min(rows - 1) } * row));
        let mut acc = [[_mm512_setzero_ps(); 2]; MR];
        macro_rules! step {
            ($p:expr) => {{
                let p = $p;
                // The panel streams from memory (a weight is read once at batch 1): ask for its lines early. A
                // prefetch past the panel's end is a hint only and never faults.
                _mm_prefetch::<_MM_HINT_T0>(b.wrapping_add((p + PREFETCH) * NR).cast());
                _mm_prefetch::<_MM_HINT_T0>(b.wrapping_add((p + PREFETCH) * NR + 16).cast());
                if READ != BY_ROWS {
                    _mm_prefetch::<_MM_HINT_T0>(rp[0].wrapping_add((p + COLUMNS_AHEAD) * step).cast());
                }
                let b0 = _mm512_loadu_ps(b.add(p * NR));
                let b1 = _mm512_loadu_ps(b.add(p * NR + 16));
                for i in 0..MR {
                    let av = _mm512_set1_ps(*rp[i].add(p * step));
                    acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
                    acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
                }
            }};
        }
        // A whole block of twelve rows with nothing to ask ahead runs the loop written in assembly.
        if READ == BY_ROWS && MR == 12 && rows == 12 && ahead.lines == 0 && k > 0 {
            let acc: &mut [[__m512; 2]; 12] = (&mut acc[..]).try_into().expect("MR is 12");
            sums12(k, a.at, a.ld, b, acc);
        } else {
            steps!(k, ahead, step);
        }
        if cols == NR {
            for (i, row) in acc.iter().enumerate().take(rows) {
                let out = c.add(i * ldc);
                let (mut lo, mut hi) = (row[0], row[1]);
                if accumulate {
                    lo = _mm512_add_ps(lo, _mm512_loadu_ps(out));
                    hi = _mm512_add_ps(hi, _mm512_loadu_ps(out.add(16)));
                }
                _mm512_storeu_ps(out, lo);
                _mm512_storeu_ps(out.add(16), hi);
            }
        } else {
            let mut spill = [[0.0f32; NR]; MR];
            for (s, row) in spill.iter_mut().zip(&acc) {
                _mm512_storeu_ps(s.as_mut_ptr(), row[0]);
                _mm512_storeu_ps(s.as_mut_ptr().add(16), row[1]);
            }
            store(&spill, tile);
        }
    }
}

/// The sums of a whole block of twelve rows, added to `acc`: the same steps as [`micro_avx512_rows`]'s loop, in
/// the same order (so the same floats), written in assembly so that the twelve rows are read through four
/// pointers and a stride (`[a + lda·s]`, `s` = 0, 1, 2). With twelve row pointers the compiler keeps too few in
/// registers and walks them with a chain of integer adds (12 more uops a step). Alone on one thread both loops
/// run alike (about 170 GFLOP/s); in whole products this one measured about 3% faster (ViT-B/16 at batch 1,
/// 4,096 rows of text), within twice the noise of those runs.
///
/// # Safety
/// `k` ≥ 1; rows `0..12` of A hold `k` values each, `lda` apart; the panel at `b` holds `k` rows of [`NR`].
#[target_feature(enable = "avx512f")]
unsafe fn sums12(k: usize, a: *const f32, lda: usize, b: *const f32, acc: &mut [[__m512; 2]; 12]) {
    debug_assert!(k >= 1);
    // SAFETY: the loop reads A's rows `0..12` at columns `0..k` (through `a0 + {0,1,2}·lda` … `a3 + …`, each
    // pointer three rows on from the last) and the panel's `k·NR` floats, all inside what the caller vouches
    // for; a prefetch past the panel is a hint that never faults. It writes only its register operands and
    // the pointers and count it is given by value, and touches neither the stack nor memory.
    unsafe {
        std::arch::asm!(
            "2:",
            "prefetcht0 [{b} + 4096]",
            "prefetcht0 [{b} + 4160]",
            "vmovups {b0}, [{b}]",
            "vmovups {b1}, [{b} + 64]",
            "vbroadcastss {t0}, dword ptr [{a0}]",
            "vfmadd231ps {c00}, {b0}, {t0}",
            "vfmadd231ps {c01}, {b1}, {t0}",
            "vbroadcastss {t1}, dword ptr [{a0} + {l}]",
            "vfmadd231ps {c10}, {b0}, {t1}",
            "vfmadd231ps {c11}, {b1}, {t1}",
            "vbroadcastss {t0}, dword ptr [{a0} + {l}*2]",
            "vfmadd231ps {c20}, {b0}, {t0}",
            "vfmadd231ps {c21}, {b1}, {t0}",
            "vbroadcastss {t1}, dword ptr [{a1}]",
            "vfmadd231ps {c30}, {b0}, {t1}",
            "vfmadd231ps {c31}, {b1}, {t1}",
            "vbroadcastss {t0}, dword ptr [{a1} + {l}]",
            "vfmadd231ps {c40}, {b0}, {t0}",
            "vfmadd231ps {c41}, {b1}, {t0}",
            "vbroadcastss {t1}, dword ptr [{a1} + {l}*2]",
            "vfmadd231ps {c50}, {b0}, {t1}",
            "vfmadd231ps {c51}, {b1}, {t1}",
            "vbroadcastss {t0}, dword ptr [{a2}]",
            "vfmadd231ps {c60}, {b0}, {t0}",
            "vfmadd231ps {c61}, {b1}, {t0}",
            "vbroadcastss {t1}, dword ptr [{a2} + {l}]",
            "vfmadd231ps {c70}, {b0}, {t1}",
            "vfmadd231ps {c71}, {b1}, {t1}",
            "vbroadcastss {t0}, dword ptr [{a2} + {l}*2]",
            "vfmadd231ps {c80}, {b0}, {t0}",
            "vfmadd231ps {c81}, {b1}, {t0}",
            "vbroadcastss {t1}, dword ptr [{a3}]",
            "vfmadd231ps {c90}, {b0}, {t1}",
            "vfmadd231ps {c91}, {b1}, {t1}",
            "vbroadcastss {t0}, dword ptr [{a3} + {l}]",
            "vfmadd231ps {c100}, {b0}, {t0}",
            "vfmadd231ps {c101}, {b1}, {t0}",
            "vbroadcastss {t1}, dword ptr [{a3} + {l}*2]",
            "vfmadd231ps {c110}, {b0}, {t1}",
            "vfmadd231ps {c111}, {b1}, {t1}",
            "add {a0}, 4",
            "add {a1}, 4",
            "add {a2}, 4",
            "add {a3}, 4",
            "add {b}, 128",
            "dec {k}",
            "jnz 2b",
            k = inout(reg) k => _,
            b = inout(reg) b => _,
            a0 = inout(reg) a => _,
            a1 = inout(reg) a.add(3 * lda) => _,
            a2 = inout(reg) a.add(6 * lda) => _,
            a3 = inout(reg) a.add(9 * lda) => _,
            l = in(reg) lda * 4,
            b0 = out(zmm_reg) _,
            b1 = out(zmm_reg) _,
            t0 = out(zmm_reg) _,
            t1 = out(zmm_reg) _,
            c00 = inout(zmm_reg) acc[0][0],
            c01 = inout(zmm_reg) acc[0][1],
            c10 = inout(zmm_reg) acc[1][0],
            c11 = inout(zmm_reg) acc[1][1],
            c20 = inout(zmm_reg) acc[2][0],
            c21 = inout(zmm_reg) acc[2][1],
            c30 = inout(zmm_reg) acc[3][0],
            c31 = inout(zmm_reg) acc[3][1],
            c40 = inout(zmm_reg) acc[4][0],
            c41 = inout(zmm_reg) acc[4][1],
            c50 = inout(zmm_reg) acc[5][0],
            c51 = inout(zmm_reg) acc[5][1],
            c60 = inout(zmm_reg) acc[6][0],
            c61 = inout(zmm_reg) acc[6][1],
            c70 = inout(zmm_reg) acc[7][0],
            c71 = inout(zmm_reg) acc[7][1],
            c80 = inout(zmm_reg) acc[8][0],
            c81 = inout(zmm_reg) acc[8][1],
            c90 = inout(zmm_reg) acc[9][0],
            c91 = inout(zmm_reg) acc[9][1],
            c100 = inout(zmm_reg) acc[10][0],
            c101 = inout(zmm_reg) acc[10][1],
            c110 = inout(zmm_reg) acc[11][0],
            c111 = inout(zmm_reg) acc[11][1],
            options(nostack, readonly),
        );
    }
}

#[target_feature(enable = "avx2,fma")]
#[allow(clippy::needless_range_loop)] // register tiles indexed in lock step
pub unsafe fn micro_avx2(tile: MicroTile) {
    const MR: usize = AVX2_MR;
    let MicroTile { k, a, rows, b, ahead, .. } = tile;
    // SAFETY: (whole body) the caller's contract in `Kernels::micro`.
    unsafe {
        let (row, step) = a.strides();
        // The loop holds no checked dereference or copy, which a debug build (the tests') compiles as a check:
        // A's values load through `_mm_load_ss` and the panel's by a masked load with every lane on, where
        // `*`, `add` and `_mm256_loadu_ps` (a checked `copy_nonoverlapping` through the stack) took registers from
        // the twelve sums and four operands, which fill all sixteen, and spilled sums to the stack every step: the
        // tests' encodes ran twice as long. A release build compiles both forms to the same loop.
        let rp: [*const f32; MR] = std::array::from_fn(|i| a.at.add(i.min(rows - 1) * row));
        let every_lane = _mm256_set1_epi32(-1);
        let mut acc = [[_mm256_setzero_ps(); 4]; MR];
        macro_rules! step {
            ($p:expr) => {{
                let p = $p;
                let (ap, bp) = (p * step, b.wrapping_add(p * NR));
                let av: [__m256; MR] =
                    std::array::from_fn(|i| _mm256_broadcastss_ps(_mm_load_ss(rp[i].wrapping_add(ap))));
                for j in 0..4 {
                    let bj = _mm256_maskload_ps(bp.wrapping_add(8 * j), every_lane);
                    for i in 0..MR {
                        acc[i][j] = _mm256_fmadd_ps(av[i], bj, acc[i][j]);
                    }
                }
            }};
        }
        steps!(k, ahead, step);
        let mut spill = [[0.0f32; NR]; MR];
        for (s, row) in spill.iter_mut().zip(&acc) {
            for (j, v) in row.iter().enumerate() {
                _mm256_storeu_ps(s.as_mut_ptr().add(8 * j), *v);
            }
        }
        store(&spill, tile);
    }
}
