//! The element-wise and row-wise steps in f32, written once as plain Rust that the compiler vectorises; each kernel
//! class compiles them with its own features (see `kernels`). They use no fused multiply-add and reduce in a fixed
//! order over 16 lanes, so every class computes them bit for bit alike: classes differ in the matrix kernels only.

const LANES: usize = 16;

/// The sum of `x`, in 16 lane-wise partial sums added in a fixed order.
#[inline(always)]
pub fn sum(x: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            *l += *v;
        }
    }
    for (l, v) in lanes.iter_mut().zip(tail) {
        *l += *v;
    }
    fold(lanes)
}

#[inline(always)]
fn fold(mut lanes: [f32; LANES]) -> f32 {
    let mut width = LANES / 2;
    while width > 0 {
        for i in 0..width {
            lanes[i] += lanes[i + width];
        }
        width /= 2;
    }
    lanes[0]
}

/// The sum of `(x - mean)²`.
#[inline(always)]
fn squared_deviation(x: &[f32], mean: f32) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            let d = *v - mean;
            *l += d * d;
        }
    }
    for (l, v) in lanes.iter_mut().zip(tail) {
        let d = *v - mean;
        *l += d * d;
    }
    fold(lanes)
}

/// The largest element of `x` (−∞ when empty).
#[inline(always)]
fn max(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            *l = if *v > *l { *v } else { *l };
        }
    }
    for (l, v) in lanes.iter_mut().zip(tail) {
        *l = if *v > *l { *v } else { *l };
    }
    lanes.into_iter().fold(f32::NEG_INFINITY, |a, b| if b > a { b } else { a })
}

/// LayerNorm of one row in place, as PyTorch computes it: biased variance, `eps` inside the square root.
#[inline(always)]
pub fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
    let n = x.len() as f32;
    let mean = sum(x) / n;
    let var = squared_deviation(x, mean) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, g), b) in x.iter_mut().zip(gamma).zip(beta) {
        *v = (*v - mean) * inv * *g + *b;
    }
}

/// `x += y`, element by element.
#[inline(always)]
pub fn add(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += *b;
    }
}

/// `x *= s`, element by element.
#[inline(always)]
pub fn scale(x: &mut [f32], s: f32) {
    for a in x.iter_mut() {
        *a *= s;
    }
}

/// `x / max(‖x‖, 1e-12)`, as torch's `F.normalize` and sentence-transformers' `Normalize` compute it: unit length,
/// a zero vector staying zero. The squares are summed in order, one at a time.
#[inline(always)]
pub fn normalize(x: &mut [f32]) {
    let norm = x.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    for a in x.iter_mut() {
        *a /= norm;
    }
}

const MAGIC: f32 = 12_582_912.0; // 1.5 · 2²³: adding it rounds to an integer held in the low mantissa bits

/// eˣ for x in [−87, 88] (Cephes' polynomial, relative error about 2e-7; below −87 it returns 0's neighbourhood,
/// above 88 e⁸⁸, still finite). Branch-free, so it vectorises.
#[inline(always)]
#[allow(clippy::excessive_precision)] // the published Cephes coefficients, as written
fn exp(x: f32) -> f32 {
    let x = if x < -87.0 { -87.0 } else { x };
    let x = if x > 88.0 { 88.0 } else { x };
    let t = x * std::f32::consts::LOG2_E + MAGIC;
    let n = t - MAGIC;
    let k = t.to_bits().wrapping_sub(MAGIC.to_bits()) as i32;
    let r = x - n * 0.693_359_375 + n * 2.121_944_4e-4;
    let p = ((((1.987_569_1e-4 * r + 1.398_2e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r + 1.666_666_5e-1) * r
        + 5.000_000_1e-1;
    let e = r * r * p + r + 1.0;
    // A wrapping add (k + 127 lies in 40..=215): a debug build checks `+`, and the check's branch kept the loops
    // over `exp` (softmax, GELU) from vectorising there.
    f32::from_bits((k.wrapping_add(127) << 23) as u32) * e
}

/// Softmax of `x · s` in place.
#[inline(always)]
pub fn softmax(x: &mut [f32], s: f32) {
    let m = max(x) * s;
    for v in x.iter_mut() {
        *v = exp(*v * s - m);
    }
    let inv = 1.0 / sum(x);
    scale(x, inv);
}

/// GELU in its erf form, `x · (1 + erf(x/√2)) / 2`, after adding `bias` (erf as [`one_plus_erf`] takes it).
#[inline(always)]
pub fn bias_gelu(x: &mut [f32], bias: &[f32]) {
    for (v, b) in x.iter_mut().zip(bias) {
        let x = *v + *b;
        *v = 0.5 * x * one_plus_erf(x).0;
    }
}

/// `d *= gelu'(u)`: GELU's derivative `Φ(u) + u·φ(u)` at the kept pre-activation `u`, with Φ as [`bias_gelu`] takes
/// it and φ from the same `e^(−u²/2)`.
#[inline(always)]
pub fn gelu_backward(d: &mut [f32], u: &[f32]) {
    const FRAC_1_SQRT_2PI: f32 = 0.398_942_3;
    for (d, u) in d.iter_mut().zip(u) {
        let (one_plus_erf, gauss) = one_plus_erf(*u);
        *d *= 0.5 * one_plus_erf + *u * FRAC_1_SQRT_2PI * gauss;
    }
}

/// One AdamW step's constants ([`adamw`]).
#[derive(Clone, Copy, Debug)]
pub struct AdamW {
    /// The factor the gradients are clipped by (1 when they are not).
    pub clip: f32,
    /// `1 − lr·weight_decay` for a tensor that decays, else 1.
    pub decay: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    /// `lr / (1 − β₁ᵗ)`.
    pub step_size: f32,
    /// `√(1 − β₂ᵗ)`.
    pub bias2_sqrt: f32,
}

/// One AdamW update of `p` from its gradients `g`, with the moments `m` and `v`, as `torch.optim.AdamW` computes it:
/// `p ← p·decay`, `m ← m + (1−β₁)(g·clip − m)`, `v ← β₂v + (1−β₂)(g·clip)²`, `p ← p − step_size · m / (√v/bias2_sqrt + ε)`.
/// Multiplying by a decay of 1 leaves `p` as it is, so the decay needs no branch.
#[inline(always)]
pub fn adamw(p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], k: AdamW) {
    for (((p, g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        let grad = *g * k.clip;
        *p *= k.decay;
        *m += (grad - *m) * (1.0 - k.beta1);
        *v = *v * k.beta2 + (1.0 - k.beta2) * grad * grad;
        let denom = v.sqrt() / k.bias2_sqrt + k.eps;
        *p -= k.step_size * (*m / denom);
    }
}

/// `1 + erf(x/√2)` and `e^(−x²/2)`: erfc from Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7), taken on
/// |x| so that negative inputs lose no digits to cancellation.
#[inline(always)]
fn one_plus_erf(x: f32) -> (f32, f32) {
    let z = (if x < 0.0 { -x } else { x }) * std::f32::consts::FRAC_1_SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t * (0.254_829_6 + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    let gauss = exp(-(z * z));
    let erfc = poly * gauss;
    (if x < 0.0 { erfc } else { 2.0 - erfc }, gauss)
}

/// `x · sigmoid(g(x))` after adding `bias`, as `x / (1 + e^(−g(x)))`; `e^(−g(x))` stays finite (see [`exp`]), so
/// the far negative side goes to 0, not NaN.
#[inline(always)]
fn bias_sigmoid_gate(x: &mut [f32], bias: &[f32], g: impl Fn(f32) -> f32) {
    for (v, b) in x.iter_mut().zip(bias) {
        let x = *v + *b;
        *v = x / (1.0 + exp(-g(x)));
    }
}

/// Quick GELU, `x · sigmoid(1.702 x)` (CLIP's), after adding `bias`.
#[inline(always)]
pub fn bias_quick_gelu(x: &mut [f32], bias: &[f32]) {
    bias_sigmoid_gate(x, bias, |x| 1.702 * x)
}

/// The tanh GELU, `x · (1 + tanh(√(2/π) · (x + 0.044715 x³))) / 2` (SigLIP's), after adding `bias`: since
/// `(1 + tanh(y)) / 2 = sigmoid(2y)`, it is `x · sigmoid(2√(2/π) · (x + 0.044715 x³))`.
#[inline(always)]
pub fn bias_gelu_tanh(x: &mut [f32], bias: &[f32]) {
    bias_sigmoid_gate(x, bias, |x| 1.595_769 * (x + 0.044_715 * x * x * x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_std_within_a_few_ulps() {
        for i in -8700..=0 {
            let x = i as f32 / 100.0;
            let (got, want) = (exp(x), x.exp());
            assert!((got - want).abs() <= 4e-7 * want + 1e-37, "exp({x}) = {got}, want {want}");
        }
    }

    /// erf by its Taylor series in f64, accurate to 1e-15 for |z| < 3; beyond, 1 + erf is 0 or 2 to f32 precision.
    fn erf(z: f64) -> f64 {
        if z.abs() > 4.0 {
            return z.signum();
        }
        let (mut term, mut total, mut n) = (z, z, 0.0);
        while term.abs() > 1e-17 {
            n += 1.0;
            term *= -z * z / n;
            total += term / (2.0 * n + 1.0);
        }
        total * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn gelu_backward_matches_the_derivative_in_f64_for_every_class() {
        let us: Vec<f32> = (-800..=800).map(|i| i as f32 / 100.0).collect();
        let ds: Vec<f32> = (0..us.len()).map(|i| 1.0 + (i % 7) as f32 / 4.0).collect();
        let kernels = crate::kernels::Kernels::for_class(None).unwrap();
        for (name, run) in [
            ("math", &(|d: &mut [f32], u: &[f32]| gelu_backward(d, u)) as &dyn Fn(&mut [f32], &[f32])),
            (kernels.name, &|d: &mut [f32], u: &[f32]| kernels.gelu_backward(d, u)),
        ] {
            let mut got = ds.clone();
            run(&mut got, &us);
            for ((u, d), g) in us.iter().zip(&ds).zip(&got) {
                let x = *u as f64;
                let slope =
                    0.5 * (1.0 + erf(x / 2f64.sqrt())) + x * (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
                let want = *d as f64 * slope;
                assert!(
                    (*g as f64 - want).abs() < 1e-6 * (1.0 + want.abs()),
                    "{name}: gelu'({x})·{d} = {g}, want {want}"
                );
            }
        }
    }

    #[test]
    fn adamw_of_every_class_equals_the_scalar_update_bit_for_bit() {
        let n = 1000;
        let seeded = |seed: u32| -> Vec<f32> {
            (0..n as u32).map(|i| ((i.wrapping_mul(2654435761) ^ seed) % 2001) as f32 / 1000.0 - 1.0).collect()
        };
        let (p0, g) = (seeded(1), seeded(2));
        let m0 = seeded(3);
        let v0: Vec<f32> = seeded(4).iter().map(|x| x.abs() * 1e-3).collect();
        let kernels = crate::kernels::Kernels::for_class(None).unwrap();
        for decay in [1.0, 0.999] {
            let k = AdamW { clip: 0.7, decay, beta1: 0.9, beta2: 0.999, eps: 1e-8, step_size: 3e-4, bias2_sqrt: 0.05 };
            let (mut p, mut m, mut v) = (p0.clone(), m0.clone(), v0.clone());
            kernels.adamw(&mut p, &g, &mut m, &mut v, k);
            for i in 0..n {
                let grad = g[i] * k.clip;
                let mut want_p = p0[i];
                if decay != 1.0 {
                    want_p *= decay;
                }
                let want_m = m0[i] + (grad - m0[i]) * (1.0 - k.beta1);
                let want_v = v0[i] * k.beta2 + (1.0 - k.beta2) * grad * grad;
                want_p -= k.step_size * (want_m / (want_v.sqrt() / k.bias2_sqrt + k.eps));
                assert_eq!((p[i], m[i], v[i]), (want_p, want_m, want_v), "{}: element {i}", kernels.name);
            }
        }
    }

    #[test]
    fn gelu_matches_the_erf_form() {
        let xs: Vec<f32> = (-600..=600).map(|i| i as f32 / 100.0).collect();
        let mut got = xs.clone();
        bias_gelu(&mut got, &vec![0.0; xs.len()]);
        for (x, g) in xs.iter().zip(&got) {
            let x = *x as f64;
            let want = 0.5 * x * (1.0 + erf(x / 2f64.sqrt()));
            assert!((*g as f64 - want).abs() < 1e-6, "gelu({x}) = {g}, want {want}");
        }
    }

    /// Every class's normalisation gives torch's `x / max(‖x‖, 1e-12)` bit for bit (the norm summed in order), and
    /// a zero row stays zero.
    #[test]
    fn normalize_divides_by_the_norm_on_every_class() {
        let x: Vec<f32> = (0..37).map(|i| ((i * 7919) % 101) as f32 / 10.0 - 5.0).collect();
        let mut norm = 0.0f32;
        for v in &x {
            norm += v * v;
        }
        let want: Vec<f32> = x.iter().map(|v| v / norm.sqrt()).collect();
        let mut classes = vec![Some("portable")];
        classes.extend(crate::capabilities::runnable_cpu_classes().into_iter().map(Some));
        for class in classes {
            let kernels = crate::kernels::Kernels::for_class(class).unwrap();
            let mut y = x.clone();
            kernels.normalize(&mut y);
            assert_eq!(y, want, "{class:?}");
            let mut zero = [0.0f32; 5];
            kernels.normalize(&mut zero);
            assert_eq!(zero, [0.0; 5], "{class:?}");
        }
    }

    #[test]
    fn layer_norm_and_softmax_agree_with_f64() {
        let x: Vec<f32> = (0..37).map(|i| ((i * 7919) % 101) as f32 / 10.0 - 5.0).collect();
        let mut y = x.clone();
        layer_norm(&mut y, &[2.0; 37], &[0.5; 37], 1e-12);
        let mean = x.iter().map(|v| *v as f64).sum::<f64>() / 37.0;
        let var = x.iter().map(|v| (*v as f64 - mean).powi(2)).sum::<f64>() / 37.0;
        for (a, b) in x.iter().zip(&y) {
            let want = (*a as f64 - mean) / var.sqrt() * 2.0 + 0.5;
            assert!((*b as f64 - want).abs() < 1e-5, "{b} vs {want}");
        }
        let mut p = x.clone();
        softmax(&mut p, 0.5);
        let total: f64 = x.iter().map(|v| (*v as f64 * 0.5).exp()).sum();
        for (a, b) in x.iter().zip(&p) {
            let want = (*a as f64 * 0.5).exp() / total;
            assert!((*b as f64 - want).abs() < 1e-7, "{b} vs {want}");
        }
    }
}
