//! The steps of a training pass that are not matrix products, forward and backward, on the executor's threads:
//! LayerNorm that keeps what its backward reads, its backward, column sums, and the dropout masks (GELU's
//! derivative is a row-wise kernel, [`super::math`]). Each is checked against finite differences or a plain loop
//! in the tests below.

use super::gemm::Shared;
use super::math;
use crate::error::Result;
use crate::executor::Executor;

/// Calls `f(row_index, row)` for each of the `rows` rows of `width` floats in `data`, split over the threads.
pub fn rows_mut(
    executor: &Executor,
    data: &mut [f32],
    width: usize,
    rows: usize,
    f: impl Fn(usize, &mut [f32]) + Sync,
) -> Result<()> {
    assert!(data.len() >= rows * width, "rows_mut: {rows} rows of {width} in {} floats", data.len());
    let out = Shared(data.as_mut_ptr());
    executor.for_slices(rows, |range| {
        for r in range {
            // SAFETY: row `r` is inside `data` (asserted above) and this slice of rows is this task's alone.
            let row = unsafe { out.slice(r * width, width) };
            f(r, row);
        }
    })
}

/// LayerNorm of `x` in place (`[rows × width]`), as PyTorch computes it, keeping `x̂` in `xhat` and `1/σ` per row
/// in `rstd` for the backward pass.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_keep(
    executor: &Executor,
    x: &mut [f32],
    xhat: &mut [f32],
    rstd: &mut [f32],
    rows: usize,
    (gamma, beta): (&[f32], &[f32]),
    eps: f32,
) -> Result<()> {
    let width = gamma.len();
    let (keep, inv) = (Shared(xhat.as_mut_ptr()), Shared(rstd.as_mut_ptr()));
    assert!(xhat.len() >= rows * width && rstd.len() >= rows);
    rows_mut(executor, x, width, rows, |r, row| {
        let n = width as f32;
        let mean = math::sum(row) / n;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
        let s = 1.0 / (var + eps).sqrt();
        // SAFETY: row `r` of `xhat` and entry `r` of `rstd` are in bounds (asserted above) and this row's alone.
        let (hat, sr) = unsafe { (keep.slice(r * width, width), &mut inv.slice(r, 1)[0]) };
        *sr = s;
        for ((v, h), (g, b)) in row.iter_mut().zip(hat.iter_mut()).zip(gamma.iter().zip(beta)) {
            *h = (*v - mean) * s;
            *v = *h * *g + *b;
        }
    })
}

/// LayerNorm's backward: `dy` (`[rows × width]`) becomes the gradient of its input, in place, from the kept `x̂`
/// and `1/σ`. The weight and bias gradients are summed over rows into `dgamma` and `dbeta` (overwritten).
pub fn layer_norm_backward(
    executor: &Executor,
    dy: &mut [f32],
    xhat: &[f32],
    rstd: &[f32],
    rows: usize,
    gamma: &[f32],
    (dgamma, dbeta): (&mut [f32], &mut [f32]),
) -> Result<()> {
    let width = gamma.len();
    // dgamma = Σ_r dy·x̂ and dbeta = Σ_r dy, in one pass over dy.
    sums(executor, rows, width, [dgamma, dbeta], |r, j0, [dg, db]| {
        let (d, h) = (&dy[r * width + j0..], &xhat[r * width + j0..]);
        for (((g, b), d), h) in dg.iter_mut().zip(db.iter_mut()).zip(d).zip(h) {
            *g += *d * *h;
            *b += *d;
        }
    })?;
    rows_mut(executor, dy, width, rows, |r, row| {
        let hat = &xhat[r * width..(r + 1) * width];
        let n = width as f32;
        let (mut a, mut b) = (0.0f32, 0.0f32);
        for ((d, g), h) in row.iter().zip(gamma).zip(hat) {
            let dh = d * g;
            a += dh;
            b += dh * h;
        }
        let (a, b) = (a / n, b / n);
        let s = rstd[r];
        for ((d, g), h) in row.iter_mut().zip(gamma).zip(hat) {
            *d = s * (*d * g - a - h * b);
        }
    })
}

/// `out[j] = Σ_r x[r][j]`, columns split over the threads (each sums its columns over every row, in row order).
pub fn column_sums(executor: &Executor, x: &[f32], rows: usize, width: usize, out: &mut [f32]) -> Result<()> {
    sums(executor, rows, width, [out], |r, j0, [acc]| {
        for (a, v) in acc.iter_mut().zip(&x[r * width + j0..]) {
            *a += *v;
        }
    })
}

/// Column blocks claimed by the threads, about one a thread (a multiple of 16 columns, at least 64), into each of
/// `outs` (`width` floats each, overwritten). A block starts at zero and `add_row(r, j0, accs)` adds row `r` from
/// column `j0` on, row after row: each column sums its rows in row order, whatever the threads, and a block's part
/// of a row is contiguous, so the rows stream through. (Blocks of 64 read a row's 256 bytes at the row's stride,
/// which the prefetchers do not follow across pages.)
fn sums<const N: usize>(
    executor: &Executor,
    rows: usize,
    width: usize,
    outs: [&mut [f32]; N],
    add_row: impl Fn(usize, usize, [&mut [f32]; N]) + Sync,
) -> Result<()> {
    let block = width.div_ceil(executor.threads().max(1)).next_multiple_of(16).max(64);
    let blocks = width.div_ceil(block);
    let dst = outs.map(|out| Shared(out[..width].as_mut_ptr()));
    executor.for_n_dynamic(blocks, |b| {
        let (j0, len) = (b * block, block.min(width - b * block));
        // SAFETY: columns `j0..j0+len` of each output are this block's alone, inside it (`width` floats, sliced
        // above).
        let mut accs = dst.map(|d| unsafe { d.slice(j0, len) });
        accs.iter_mut().for_each(|acc| acc.fill(0.0));
        for r in 0..rows {
            add_row(r, j0, accs.each_mut().map(|acc| &mut **acc));
        }
    })
}

/// Dropout masks that need no storage: whether element `index` of site `site` survives is a hash of the seed, the
/// step, the site and the index, so the backward pass recomputes the forward pass's mask.
#[derive(Clone, Copy, Debug)]
pub struct Dropout {
    /// The probability of dropping; 0 turns the site off.
    pub p: f32,
    pub seed: u64,
    pub step: u64,
}

impl Dropout {
    pub fn active(&self) -> bool {
        self.p > 0.0
    }

    /// The factor element `index` of `site` is multiplied by: 0 when dropped, `1/(1-p)` when kept.
    #[inline]
    pub fn factor(&self, site: u64, index: u64) -> f32 {
        let mut z =
            self.seed ^ self.step.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ site.wrapping_mul(0xD1B5_4A32_D192_ED03);
        z = z.wrapping_add(index.wrapping_mul(0x94D0_49BB_1331_11EB));
        // splitmix64's finaliser.
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let u = (z >> 40) as f32 * (1.0 / (1u64 << 24) as f32);
        if u < self.p {
            0.0
        } else {
            1.0 / (1.0 - self.p)
        }
    }

    /// Multiplies `x` (elements `first..` of `site`) by the mask.
    pub fn apply(&self, site: u64, first: u64, x: &mut [f32]) {
        if !self.active() {
            return;
        }
        for (i, v) in x.iter_mut().enumerate() {
            *v *= self.factor(site, first + i as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executor() -> Executor {
        Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap()
    }

    fn values(len: usize, seed: usize) -> Vec<f32> {
        (0..len).map(|i| (((i * 2654435761 + seed * 97) % 1000) as f32 / 500.0) - 1.0).collect()
    }

    /// The loss `Σ w ⊙ LayerNorm(x)` differentiated by central differences in f64 against the backward pass.
    #[test]
    fn layer_norm_backward_matches_finite_differences() {
        let ex = executor();
        let (rows, width) = (3, 37);
        let x = values(rows * width, 1);
        let (gamma, beta, w) = (values(width, 2), values(width, 3), values(rows * width, 4));
        let loss = |x: &[f32], gamma: &[f32], beta: &[f32]| -> f64 {
            let mut y = x.to_vec();
            let (mut hat, mut rs) = (vec![0.0; rows * width], vec![0.0; rows]);
            layer_norm_keep(&ex, &mut y, &mut hat, &mut rs, rows, (gamma, beta), 1e-12).unwrap();
            y.iter().zip(&w).map(|(a, b)| *a as f64 * *b as f64).sum()
        };
        let mut y = x.clone();
        let (mut hat, mut rs) = (vec![0.0; rows * width], vec![0.0; rows]);
        layer_norm_keep(&ex, &mut y, &mut hat, &mut rs, rows, (&gamma, &beta), 1e-12).unwrap();
        let mut d = w.clone();
        let (mut dg, mut db) = (vec![0.0; width], vec![0.0; width]);
        layer_norm_backward(&ex, &mut d, &hat, &rs, rows, &gamma, (&mut dg, &mut db)).unwrap();
        let h = 1e-2f32;
        for i in (0..rows * width).step_by(5) {
            let (mut up, mut down) = (x.clone(), x.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (loss(&up, &gamma, &beta) - loss(&down, &gamma, &beta)) / (2.0 * h as f64);
            assert!((fd - d[i] as f64).abs() < 2e-3 * fd.abs().max(1.0), "dx[{i}]: {} vs {fd}", d[i]);
        }
        for j in (0..width).step_by(3) {
            let (mut up, mut down) = (gamma.clone(), gamma.clone());
            up[j] += h;
            down[j] -= h;
            let fd = (loss(&x, &up, &beta) - loss(&x, &down, &beta)) / (2.0 * h as f64);
            assert!((fd - dg[j] as f64).abs() < 2e-3 * fd.abs().max(1.0), "dgamma[{j}]: {} vs {fd}", dg[j]);
            let (mut up, mut down) = (beta.clone(), beta.clone());
            up[j] += h;
            down[j] -= h;
            let fd = (loss(&x, &gamma, &up) - loss(&x, &gamma, &down)) / (2.0 * h as f64);
            assert!((fd - db[j] as f64).abs() < 2e-3 * fd.abs().max(1.0), "dbeta[{j}]: {} vs {fd}", db[j]);
        }
    }

    #[test]
    fn column_sums_equal_plain_loops_in_row_order_bit_for_bit() {
        // Widths of one block, of blocks that end inside the last, and of several blocks per thread's share.
        let ex = executor();
        for (rows, width) in [(7, 130), (5, 40), (33, 1536), (3, 1000)] {
            let x = values(rows * width, 5);
            let mut s = vec![9.0; width];
            column_sums(&ex, &x, rows, width, &mut s).unwrap();
            for j in 0..width {
                let want = (0..rows).fold(0.0f32, |a, r| a + x[r * width + j]);
                assert_eq!(s[j], want, "{rows} × {width}, column {j}");
            }
        }
    }

    #[test]
    fn dropout_keeps_about_one_minus_p_and_repeats_itself() {
        let d = Dropout { p: 0.1, seed: 7, step: 3 };
        let kept = (0..100_000u64).filter(|i| d.factor(2, *i) > 0.0).count();
        assert!((89_000..91_000).contains(&kept), "{kept} kept of 100000");
        assert_eq!(d.factor(2, 12345), d.factor(2, 12345));
        let other = Dropout { step: 4, ..d };
        assert!((0..1000u64).any(|i| d.factor(2, i) != other.factor(2, i)));
        assert_eq!(d.factor(1, 5).max(0.0), d.factor(1, 5));
        let off = Dropout { p: 0.0, ..d };
        let mut x = vec![2.0; 10];
        off.apply(1, 0, &mut x);
        assert_eq!(x, vec![2.0; 10]);
    }
}
