//! bf16 products: a weight matrix kept as bfloat16 panels, activations rounded to bf16 a block of rows at a time,
//! and the products summed in f32 by the CPU's bf16 instructions.
//!
//! **Layout.** A packed `n × k` matrix is panels of [`NR`] columns, as the f32 ones, but along `k` in pairs and
//! padded to [`KB`]: panel `q` holds `B[p][q·NR + j]` at `q·kp·NR + (p/2)·2·NR + 2j + p%2` (`kp` = `k` rounded up to
//! `KB`, zeros past `k` and past `n`). A pair of neighbouring `k` for 16 columns is what one `vdpbf16ps` lane and
//! one row of an AMX tile read, so both kernels read the same panels, and so does the reference.
//!
//! **Blocks.** Every kernel computes one block: up to [`BLOCK`] rows of bf16 activations (rows `kp` apart, rows
//! past the block's padded to 16 with zeros) times one panel, into a `BLOCK × NR` f32 buffer, summed over the
//! whole of `kp` in `KB` steps.
//!
//! | kernel       | CPU classes                            | how                                                   |
//! |--------------|----------------------------------------|-------------------------------------------------------|
//! | `amx`        | `intel-sapphirerapids` (AMX-BF16, and the OS grants the tile state) | 2 × 2 tiles of 16 × 16 f32 sums, `tdpbf16ps` |
//! | `avx512bf16` | `amd-genoa`; sapphirerapids when the OS refuses AMX | 8 rows × 32 columns, `vdpbf16ps`               |
//! | `reference`  | none (the tests' reference)            | plain Rust, each pair of products summed in f32      |
//!
//! Classes without AVX512_BF16 have no bf16 kernel: a model that asks for bf16 on them is refused when it is loaded
//! (see `crate::verbs::model`), rather than run a slower emulation the user did not choose.

#[cfg(target_arch = "x86_64")]
use super::isa::x86_bf16 as x86;
pub use super::isa::{to_bf16, BLOCK, KB};
use super::NR;

/// `k` rounded up to [`KB`].
pub fn padded_k(k: usize) -> usize {
    k.div_ceil(KB) * KB
}

/// bf16 values a packed `n × k` matrix takes.
pub fn packed_len(n: usize, k: usize) -> usize {
    n.div_ceil(NR) * NR * padded_k(k)
}

/// bf16 to f32, exactly.
#[inline]
pub fn to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// Packs a weight matrix stored `[n × k]` (PyTorch's `Linear`) into bf16 panels.
pub fn pack_weights(w: &[f32], n: usize, k: usize) -> Vec<u16> {
    assert!(w.len() >= n * k, "pack: {} values for {n} × {k}", w.len());
    let kp = padded_k(k);
    let mut out = vec![0u16; packed_len(n, k)];
    for (q, panel) in out.chunks_exact_mut(kp * NR).enumerate() {
        for jj in 0..NR.min(n - q * NR) {
            let row = &w[(q * NR + jj) * k..(q * NR + jj + 1) * k];
            for (p, v) in row.iter().enumerate() {
                panel[(p / 2) * 2 * NR + 2 * jj + p % 2] = to_bf16(*v);
            }
        }
    }
    out
}

/// Rounds `rows` rows of `k` f32 (`lda` apart from `a`) to bf16 rows `kp` apart in `dst`, zero past `k` and in
/// the rows up to the next multiple of 16.
///
/// # Safety
/// `a` covers `rows` rows of `k` at stride `lda`.
pub unsafe fn round_rows(kernel: Kernel, a: *const f32, lda: usize, rows: usize, k: usize, dst: &mut Vec<u16>) {
    let kp = padded_k(k);
    let padded = rows.div_ceil(16) * 16;
    dst.clear();
    dst.resize(padded * kp, 0);
    for i in 0..rows {
        // SAFETY: the caller's contract covers row `i`.
        let src = unsafe { std::slice::from_raw_parts(a.add(i * lda), k) };
        let out = &mut dst[i * kp..i * kp + k];
        #[cfg(target_arch = "x86_64")]
        if !matches!(kernel, Kernel::Reference) {
            // SAFETY: the AMX and AVX512_BF16 kernels are built only where AVX512_BF16 runs (`Kernel::for_class`).
            unsafe { x86::round(src, out) };
            continue;
        }
        let _ = kernel;
        out.iter_mut().zip(src).for_each(|(o, v)| *o = to_bf16(*v));
    }
}

/// One bf16 kernel; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Amx,
    Avx512Bf16,
    Reference,
}

impl Kernel {
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Amx => "amx",
            Kernel::Avx512Bf16 => "avx512bf16",
            Kernel::Reference => "reference",
        }
    }

    /// The bf16 kernel of a class with `features` (its table entry), checked against this CPU and OS; `None` for a
    /// class without AVX512_BF16.
    pub fn for_features(features: &[&str]) -> Option<Kernel> {
        let has = |f: &str| features.contains(&f) && crate::capabilities::feature_detected(f);
        if !(has("avx512bf16") && has("avx512f") && has("avx512bw")) {
            return None;
        }
        if has("amx-tile") && has("amx-bf16") && x86_amx_granted() {
            return Some(Kernel::Amx);
        }
        Some(Kernel::Avx512Bf16)
    }

    /// Every kernel this CPU runs, the reference included: what the tests compare.
    pub fn runnable() -> Vec<Kernel> {
        let mut all = vec![Kernel::Reference];
        if let Some(class) = crate::capabilities::cpu_class("amd-genoa") {
            all.extend(Kernel::for_features(class.features));
        }
        if let Some(class) = crate::capabilities::cpu_class("intel-sapphirerapids") {
            all.extend(Kernel::for_features(class.features).filter(|k| *k == Kernel::Amx));
        }
        all
    }

    /// Readies the calling thread for [`Kernel::block`] (AMX: loads the tile configuration); pair with
    /// [`Kernel::end`] before the thread does anything else.
    #[inline]
    pub fn begin(self) {
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::Amx {
            // SAFETY: `Kernel::Amx` is built only where the CPU has AMX and the OS granted its tile state.
            unsafe { x86::amx_configure() };
        }
    }

    /// Releases what [`Kernel::begin`] took (AMX: the tile state, so the OS need not save it).
    #[inline]
    pub fn end(self) {
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::Amx {
            // SAFETY: as in `begin`.
            unsafe { x86::amx_release() };
        }
    }

    /// `out[i][j] = Σ_p A[i][p]·B[p][j]` for `i < rows` (≤ [`BLOCK`]) and the panel's `NR` columns, with `out` rows
    /// `NR` apart: A's rows `kp` apart from `a` (padded to 16 rows), `panel` one packed panel of `kp` rows.
    ///
    /// # Safety
    /// `a` covers `rows.div_ceil(16)·16` rows of `kp` bf16 values; `panel` covers `kp·NR`; on the AMX kernel the
    /// thread is between [`Kernel::begin`] and [`Kernel::end`].
    #[inline]
    pub unsafe fn block(self, kp: usize, a: *const u16, rows: usize, panel: *const u16, out: &mut [f32; BLOCK * NR]) {
        debug_assert!((1..=BLOCK).contains(&rows) && kp.is_multiple_of(KB));
        match self {
            // SAFETY: the caller's contract; `Kernel::Amx` exists only where AMX runs and the OS granted it.
            #[cfg(target_arch = "x86_64")]
            Kernel::Amx => unsafe { x86::amx_block(kp, a, rows, panel, out) },
            // SAFETY: the caller's contract; `Kernel::Avx512Bf16` exists only where AVX512_BF16 runs.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Bf16 => unsafe { x86::dot_block(kp, a, rows, panel, out) },
            // SAFETY: the caller's contract.
            _ => unsafe { reference_block(kp, a, rows, panel, out) },
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn x86_amx_granted() -> bool {
    x86::amx_granted()
}
#[cfg(not(target_arch = "x86_64"))]
fn x86_amx_granted() -> bool {
    false
}

/// The reference: each pair of products summed in f32, then added, in the order of `k`.
unsafe fn reference_block(kp: usize, a: *const u16, rows: usize, panel: *const u16, out: &mut [f32; BLOCK * NR]) {
    // SAFETY: the caller's contract in `Kernel::block`.
    let (panel, a) = unsafe { (std::slice::from_raw_parts(panel, kp * NR), std::slice::from_raw_parts(a, rows * kp)) };
    for i in 0..rows {
        let acc = &mut out[i * NR..(i + 1) * NR];
        acc.fill(0.0);
        for r in 0..kp / 2 {
            let (a0, a1) = (to_f32(a[i * kp + 2 * r]), to_f32(a[i * kp + 2 * r + 1]));
            let b = &panel[r * 2 * NR..(r + 1) * 2 * NR];
            for (j, acc) in acc.iter_mut().enumerate() {
                *acc += a0 * to_f32(b[2 * j]) + a1 * to_f32(b[2 * j + 1]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_to_nearest_even() {
        assert_eq!(to_bf16(1.0), 0x3f80);
        assert_eq!(to_f32(to_bf16(1.0 + 1.0 / 256.0)), 1.0); // a tie, to even
        assert_eq!(to_f32(to_bf16(1.0 + 3.0 / 256.0)), 1.0 + 4.0 / 256.0); // a tie, to even (up)
        assert_eq!(to_f32(to_bf16(1.0 + 1.5 / 256.0)), 1.0 + 2.0 / 256.0);
        assert!(to_f32(to_bf16(f32::NAN)).is_nan());
        assert_eq!(to_f32(to_bf16(f32::INFINITY)), f32::INFINITY);
    }

    #[test]
    fn every_kernel_rounds_and_multiplies_as_the_reference() {
        let (k, kp) = (70, padded_k(70));
        let values = |len: usize, seed: usize| -> Vec<f32> {
            (0..len).map(|i| (((i * 2654435761 + seed * 97) % 1000) as f32 / 300.0) - 1.7).collect()
        };
        let w = values(NR * k, 1);
        let panel = pack_weights(&w, NR, k);
        for rows in [1, 7, 16, 17, 32] {
            let a = values(rows * k, 2);
            let mut want = [0f32; BLOCK * NR];
            let mut bf = Vec::new();
            // SAFETY: `a` holds `rows` rows of `k`.
            unsafe { round_rows(Kernel::Reference, a.as_ptr(), k, rows, k, &mut bf) };
            // SAFETY: `bf` holds the padded rows, `panel` one panel.
            unsafe { Kernel::Reference.block(kp, bf.as_ptr(), rows, panel.as_ptr(), &mut want) };
            // The reference against an f64 sum of the rounded values.
            for i in 0..rows {
                for j in 0..NR {
                    let exact: f64 = (0..k)
                        .map(|p| to_f32(to_bf16(a[i * k + p])) as f64 * to_f32(to_bf16(w[j * k + p])) as f64)
                        .sum();
                    assert!((want[i * NR + j] as f64 - exact).abs() < 1e-4 * exact.abs().max(1.0), "[{i}][{j}]");
                }
            }
            for kernel in Kernel::runnable() {
                let mut rounded = Vec::new();
                // SAFETY: as above.
                unsafe { round_rows(kernel, a.as_ptr(), k, rows, k, &mut rounded) };
                assert_eq!(rounded, bf, "{kernel:?} rounds as the reference");
                let mut got = [f32::NAN; BLOCK * NR];
                kernel.begin();
                // SAFETY: as above.
                unsafe { kernel.block(kp, rounded.as_ptr(), rows, panel.as_ptr(), &mut got) };
                kernel.end();
                for idx in 0..rows * NR {
                    let (g, w) = (got[idx], want[idx]);
                    assert!((g - w).abs() < 1e-4 * w.abs().max(1.0), "{kernel:?} rows {rows} [{idx}]: {g} vs {w}");
                }
            }
        }
    }
}
