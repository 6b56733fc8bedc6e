//! sentence-transformers' `MultipleNegativesRankingLoss` and its gradient, in f64 (the batch is small): anchors
//! and positives are normalised, `S = scale · A·Pᵀ`, and the loss is the mean cross-entropy of each row of `S`
//! against its diagonal, `mean_i(logsumexp(S_i) − S_ii)`. A model whose pipeline already normalises gets the same
//! value and the same gradient: normalising a unit vector again changes neither.

/// The loss of `pooled` (`2·pairs` rows of `width`: the anchors, then their positives) and its gradient with
/// respect to every pooled row, written into `grad` (same shape).
pub fn contrastive(pooled: &[f32], pairs: usize, width: usize, scale: f64, grad: &mut [f32]) -> f64 {
    let rows = 2 * pairs;
    let mut unit = vec![0.0f64; rows * width];
    let mut norms = vec![0.0f64; rows];
    for r in 0..rows {
        let row = &pooled[r * width..(r + 1) * width];
        let norm = row.iter().map(|v| (*v as f64) * (*v as f64)).sum::<f64>().sqrt();
        norms[r] = norm;
        // torch.nn.functional.normalize divides by max(‖v‖, 1e-12).
        let inv = 1.0 / norm.max(1e-12);
        for (u, v) in unit[r * width..(r + 1) * width].iter_mut().zip(row) {
            *u = *v as f64 * inv;
        }
    }
    let (a, p) = unit.split_at(pairs * width);
    let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(u, v)| u * v).sum::<f64>();
    let mut s = vec![0.0f64; pairs * pairs];
    for i in 0..pairs {
        for j in 0..pairs {
            s[i * pairs + j] = scale * dot(&a[i * width..(i + 1) * width], &p[j * width..(j + 1) * width]);
        }
    }
    // dS = (softmax(S_i) − e_i) / pairs.
    let mut loss = 0.0;
    let mut ds = vec![0.0f64; pairs * pairs];
    for i in 0..pairs {
        let row = &s[i * pairs..(i + 1) * pairs];
        let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = row.iter().map(|v| (v - max).exp()).sum();
        loss += max + total.ln() - row[i];
        for j in 0..pairs {
            ds[i * pairs + j] = ((row[j] - max).exp() / total - if i == j { 1.0 } else { 0.0 }) / pairs as f64;
        }
    }
    let mut du = vec![0.0f64; rows * width];
    for i in 0..pairs {
        for j in 0..pairs {
            let g = scale * ds[i * pairs + j];
            for c in 0..width {
                du[i * width + c] += g * p[j * width + c];
                du[(pairs + j) * width + c] += g * a[i * width + c];
            }
        }
    }
    // Through the normalisation: d = (du − u·(u·du)) / ‖v‖.
    for r in 0..rows {
        let u = &unit[r * width..(r + 1) * width];
        let d = &du[r * width..(r + 1) * width];
        let along = dot(u, d);
        let inv = if norms[r] > 1e-12 { 1.0 / norms[r] } else { 1e12 };
        for ((g, u), d) in grad[r * width..(r + 1) * width].iter_mut().zip(u).zip(d) {
            *g = if norms[r] > 1e-12 { ((d - u * along) * inv) as f32 } else { (d * inv) as f32 };
        }
    }
    loss / pairs as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_matches_finite_differences() {
        let (pairs, width) = (3, 5);
        let pooled: Vec<f32> = (0..2 * pairs * width).map(|i| ((i * 37 % 11) as f32 - 5.0) / 4.0).collect();
        let mut grad = vec![0.0; pooled.len()];
        let loss = contrastive(&pooled, pairs, width, 20.0, &mut grad);
        assert!(loss.is_finite() && loss > 0.0);
        let mut scratch = vec![0.0; pooled.len()];
        for i in 0..pooled.len() {
            let h = 1e-3f32;
            let (mut up, mut down) = (pooled.clone(), pooled.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (contrastive(&up, pairs, width, 20.0, &mut scratch)
                - contrastive(&down, pairs, width, 20.0, &mut scratch))
                / (2.0 * h as f64);
            assert!((fd - grad[i] as f64).abs() < 1e-3 * fd.abs().max(1.0), "[{i}] {} vs {fd}", grad[i]);
        }
    }

    #[test]
    fn a_perfect_match_costs_little_and_a_swap_costs_a_lot() {
        let width = 2;
        let matched = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        let swapped = [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0];
        let mut g = vec![0.0; 8];
        let good = contrastive(&matched, 2, width, 20.0, &mut g);
        let bad = contrastive(&swapped, 2, width, 20.0, &mut g);
        assert!(good < 1e-6, "{good}");
        assert!((bad - 20.0).abs() < 1e-6, "{bad}");
    }
}
