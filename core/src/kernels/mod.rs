//! Kernels, the layer of core's compute below the families: GEMM over packed panels ([`gemm`]), self-attention
//! over a batch of sequences ([`attention`], and its training pass), the row-wise steps ([`math`]: norms,
//! activations, softmax) and the steps of a training pass that are not matrix products ([`ops`]), per CPU class and
//! precision. They know no model.
//!
//! The kernels of each CPU class: a matrix micro-kernel written with `std::arch` intrinsics per class, and the
//! row-wise steps of [`math`] compiled with the class's features.
//!
//! | kernels    | CPU classes                                          | micro-kernel                        |
//! |------------|------------------------------------------------------|-------------------------------------|
//! | `avx512`   | every class with `avx512f` (skylake … sapphirerapids) | 12 rows × 32 columns, 24 zmm sums   |
//! | `avx2`     | `intel-haswell`                                      | 3 rows × 32 columns, 12 ymm sums    |
//! | `portable` | `portable` and every other architecture              | 4 rows × 32 columns, plain Rust     |
//!
//! Every micro-kernel reads the same packed right-hand panels (32 columns, see [`gemm`]), reads A by rows or by
//! columns ([`Lhs`]: a transposed A where it lies, as a weight gradient's `dYᵀ`), and sums over `k` in order;
//! the x86 ones fuse each multiply-add, so `avx2` and `avx512` agree bit for bit, and `portable` rounds each
//! product once more.
//!
//! For bf16 weights, the classes with AVX512_BF16 add a bf16 kernel ([`bf16`]: AMX tiles on sapphirerapids,
//! `vdpbf16ps` on genoa), which [`gemm::dense`] runs for weights packed as bf16.

pub(crate) mod activation;
pub(crate) mod attention;
pub(crate) mod bf16;
pub(crate) mod gemm;
pub(crate) mod math;
pub(crate) mod ops;

use crate::error::{Error, Result};

/// Columns of one packed right-hand panel: two AVX-512 vectors.
pub const NR: usize = 32;

/// `C[rows × cols] (+)= A[rows × k] · B[k × NR]`: A where [`Lhs`] says, the packed panel at `b` (`k` rows of `NR`),
/// C's row `i` at `c + i·ldc`; `rows` ≤ the kernel's `mr`, `cols` ≤ `NR`; `accumulate` adds to C; `ahead`, memory to
/// ask into L2 meanwhile.
pub type Micro = unsafe fn(usize, Lhs, usize, *const f32, *mut f32, usize, usize, bool, Ahead);

/// Where a product's left-hand matrix A lies: `A[i][p]` at `at + i·ld + p` (by rows, the usual), or, `columns`, at
/// `at + p·ld + i`: A given as its transpose, `k` rows of `ld` floats, as the `dYᵀ` of a weight's gradient
/// `dW = dYᵀ·X` or attention's `Pᵀ`, which the kernels then read where they lie instead of a transposed copy.
#[derive(Clone, Copy, Debug)]
pub struct Lhs {
    pub at: *const f32,
    pub ld: usize,
    pub columns: bool,
}

impl Lhs {
    /// A's row `i` at `at + i·ld`.
    pub fn rows(at: *const f32, ld: usize) -> Lhs {
        Lhs { at, ld, columns: false }
    }

    /// A's column `p` (its row `p` transposed) at `at + p·ld`.
    pub fn columns(at: *const f32, ld: usize) -> Lhs {
        Lhs { at, ld, columns: true }
    }

    /// The same matrix from its row `i` on (a pointer offset only: nothing is read).
    pub fn from_row(self, i: usize) -> Lhs {
        Lhs { at: self.at.wrapping_add(if self.columns { i } else { i * self.ld }), ..self }
    }

    /// The same matrix from its step (column) `p` on.
    pub fn from_step(self, p: usize) -> Lhs {
        Lhs { at: self.at.wrapping_add(if self.columns { p * self.ld } else { p }), ..self }
    }

    /// A's `(row, step)` strides: `A[i][p]` at `at + i·row + p·step`.
    #[inline(always)]
    fn strides(self) -> (usize, usize) {
        if self.columns {
            (1, self.ld)
        } else {
            (self.ld, 1)
        }
    }
}

/// Cache lines a micro-kernel call asks into L2 while it runs, two per step of `k` (`lines` ≤ 2·k): the part of the
/// next panel this call fetches, so that the panel's first pass, which at batch 1 reads weights from memory, finds
/// them in cache. A hint only: the lines need not be mapped, and a kernel may ignore it.
#[derive(Clone, Copy)]
pub struct Ahead {
    pub at: *const f32,
    pub lines: usize,
}

impl Ahead {
    pub const NONE: Ahead = Ahead { at: std::ptr::null(), lines: 0 };
}

/// [`Kernels::adamw`] as compiled for one class: weights, gradients, the two moments, the step's constants.
type AdamWKernel = unsafe fn(&mut [f32], &[f32], &mut [f32], &mut [f32], math::AdamW);

/// One class's kernels. Built only by [`Kernels::for_class`], which checks that this CPU runs them.
#[derive(Clone, Copy)]
pub struct Kernels {
    pub name: &'static str,
    /// Rows per micro-kernel call.
    pub mr: usize,
    micro: Micro,
    /// The bf16 products of the class: `None` where it lacks AVX512_BF16 (see [`bf16`]).
    pub bf16: Option<bf16::Kernel>,
    layer_norm: unsafe fn(&mut [f32], &[f32], &[f32], f32),
    bias_gelu: unsafe fn(&mut [f32], &[f32]),
    gelu_backward: unsafe fn(&mut [f32], &[f32]),
    bias_quick_gelu: unsafe fn(&mut [f32], &[f32]),
    bias_gelu_tanh: unsafe fn(&mut [f32], &[f32]),
    add: unsafe fn(&mut [f32], &[f32]),
    softmax: unsafe fn(&mut [f32], f32),
    scale: unsafe fn(&mut [f32], f32),
    bias_tile: unsafe fn(*mut f32, usize, usize, &[f32], Option<activation::Activation>),
    adamw: AdamWKernel,
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! rowwise {
    ($module:ident $(, $features:literal)?) => {
        mod $module {
            use super::math;
            $(#[target_feature(enable = $features)])?
            pub unsafe fn layer_norm(x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
                math::layer_norm(x, gamma, beta, eps)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn bias_gelu(x: &mut [f32], bias: &[f32]) {
                math::bias_gelu(x, bias)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn gelu_backward(d: &mut [f32], u: &[f32]) {
                math::gelu_backward(d, u)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn bias_quick_gelu(x: &mut [f32], bias: &[f32]) {
                math::bias_quick_gelu(x, bias)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn bias_gelu_tanh(x: &mut [f32], bias: &[f32]) {
                math::bias_gelu_tanh(x, bias)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn add(x: &mut [f32], y: &[f32]) {
                math::add(x, y)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn softmax(x: &mut [f32], s: f32) {
                math::softmax(x, s)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn scale(x: &mut [f32], s: f32) {
                math::scale(x, s)
            }
            $(#[target_feature(enable = $features)])?
            pub unsafe fn adamw(p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], k: math::AdamW) {
                math::adamw(p, g, m, v, k)
            }
            /// `Kernels::bias_tile`: every row in one call, so that the row-wise step inlines into the loop.
            $(#[target_feature(enable = $features)])?
            pub unsafe fn bias_tile(
                c: *mut f32,
                ldc: usize,
                rows: usize,
                bias: &[f32],
                activation: Option<super::activation::Activation>,
            ) {
                use super::activation::Activation;
                for i in 0..rows {
                    // SAFETY: the caller's contract in `Kernels::bias_tile`.
                    let row = unsafe { std::slice::from_raw_parts_mut(c.add(i * ldc), bias.len()) };
                    match activation {
                        None => math::add(row, bias),
                        Some(Activation::Gelu) => math::bias_gelu(row, bias),
                        Some(Activation::GeluTanh) => math::bias_gelu_tanh(row, bias),
                        Some(Activation::QuickGelu) => math::bias_quick_gelu(row, bias),
                    }
                }
            }
        }
    };
}

rowwise!(rowwise_portable);
#[cfg(target_arch = "x86_64")]
rowwise!(rowwise_avx2, "avx2,fma");
#[cfg(target_arch = "x86_64")]
rowwise!(rowwise_avx512, "avx512f,avx2,fma");

macro_rules! kernels {
    ($name:literal, $mr:expr, $micro:path, $rowwise:ident) => {
        Kernels {
            name: $name,
            mr: $mr,
            micro: $micro,
            bf16: None,
            layer_norm: $rowwise::layer_norm,
            bias_gelu: $rowwise::bias_gelu,
            gelu_backward: $rowwise::gelu_backward,
            bias_quick_gelu: $rowwise::bias_quick_gelu,
            bias_gelu_tanh: $rowwise::bias_gelu_tanh,
            add: $rowwise::add,
            softmax: $rowwise::softmax,
            scale: $rowwise::scale,
            bias_tile: $rowwise::bias_tile,
            adamw: $rowwise::adamw,
        }
    };
}

impl Kernels {
    pub fn portable() -> Kernels {
        kernels!("portable", PORTABLE_MR, micro_portable, rowwise_portable)
    }

    /// The kernels for CPU class `class` (a name the executor validated), `None` meaning this CPU's native class.
    pub fn for_class(class: Option<&str>) -> Result<Kernels> {
        let name = class.unwrap_or_else(|| crate::capabilities::native_cpu_class());
        let class = crate::capabilities::cpu_class(name)
            .ok_or_else(|| Error::internal(format!("the executor holds an unknown CPU class {name:?}")))?;
        let has = |feature: &str| class.features.contains(&feature) && crate::capabilities::feature_detected(feature);
        #[cfg(target_arch = "x86_64")]
        {
            if has("avx512f") && has("avx2") && has("fma") {
                let kernels = kernels!("avx512", x86::AVX512_MR, x86::micro_avx512, rowwise_avx512);
                return Ok(Kernels { bf16: bf16::Kernel::for_features(class.features), ..kernels });
            }
            if has("avx2") && has("fma") {
                return Ok(kernels!("avx2", x86::AVX2_MR, x86::micro_avx2, rowwise_avx2));
            }
        }
        let _ = has;
        Ok(Kernels::portable())
    }

    /// See [`Micro`].
    ///
    /// # Safety
    /// The pointers must cover what [`Micro`] reads and writes, with `1 ≤ rows ≤ self.mr` and `1 ≤ cols ≤ NR`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn micro(
        &self,
        k: usize,
        a: Lhs,
        rows: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        cols: usize,
        accumulate: bool,
        ahead: Ahead,
    ) {
        debug_assert!((1..=self.mr).contains(&rows) && (1..=NR).contains(&cols) && ahead.lines <= 2 * k);
        // SAFETY: the features were checked in `for_class`; the caller vouches for the pointers.
        unsafe { (self.micro)(k, a, rows, b, c, ldc, cols, accumulate, ahead) }
    }

    pub fn layer_norm(&self, x: &mut [f32], gamma: &[f32], beta: &[f32], eps: f32) {
        // SAFETY: the features were checked in `for_class`.
        unsafe { (self.layer_norm)(x, gamma, beta, eps) }
    }
    pub fn bias_gelu(&self, x: &mut [f32], bias: &[f32]) {
        // SAFETY: as above.
        unsafe { (self.bias_gelu)(x, bias) }
    }
    /// `gelu(x)` in place, the erf form.
    pub fn gelu(&self, x: &mut [f32]) {
        const ZEROS: [f32; 64] = [0.0; 64];
        for chunk in x.chunks_mut(64) {
            let n = chunk.len();
            self.bias_gelu(chunk, &ZEROS[..n]);
        }
    }
    /// `d *= gelu'(u)`: the erf form's derivative at the pre-activation `u`.
    pub fn gelu_backward(&self, d: &mut [f32], u: &[f32]) {
        assert_eq!(d.len(), u.len(), "gelu_backward: {} gradients for {} inputs", d.len(), u.len());
        // SAFETY: as above.
        unsafe { (self.gelu_backward)(d, u) }
    }
    pub fn bias_quick_gelu(&self, x: &mut [f32], bias: &[f32]) {
        // SAFETY: as above.
        unsafe { (self.bias_quick_gelu)(x, bias) }
    }
    pub fn bias_gelu_tanh(&self, x: &mut [f32], bias: &[f32]) {
        // SAFETY: as above.
        unsafe { (self.bias_gelu_tanh)(x, bias) }
    }
    /// One AdamW update of `p` and its moments `m`, `v` from the gradients `g` ([`math::adamw`]); all four the same
    /// length.
    pub fn adamw(&self, p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32], k: math::AdamW) {
        let n = p.len();
        assert!(
            g.len() == n && m.len() == n && v.len() == n,
            "adamw: lengths {n}, {}, {}, {}",
            g.len(),
            m.len(),
            v.len()
        );
        // SAFETY: as above.
        unsafe { (self.adamw)(p, g, m, v, k) }
    }
    pub fn add(&self, x: &mut [f32], y: &[f32]) {
        // SAFETY: as above.
        unsafe { (self.add)(x, y) }
    }
    pub fn softmax(&self, x: &mut [f32], s: f32) {
        // SAFETY: as above.
        unsafe { (self.softmax)(x, s) }
    }
    pub fn scale(&self, x: &mut [f32], s: f32) {
        // SAFETY: as above.
        unsafe { (self.scale)(x, s) }
    }
    /// `C[i] = activation(C[i] + bias)` (only the bias where `activation` is `None`) for the `rows` rows of
    /// `bias.len()` floats at `c + i·ldc`: a product's tile, in one call rather than one a row.
    ///
    /// # Safety
    /// The rows lie inside one allocation, written by no one else meanwhile.
    pub unsafe fn bias_tile(
        &self,
        c: *mut f32,
        ldc: usize,
        rows: usize,
        bias: &[f32],
        activation: Option<activation::Activation>,
    ) {
        // SAFETY: the features as above; the caller vouches for the rows.
        unsafe { (self.bias_tile)(c, ldc, rows, bias, activation) }
    }
}

const PORTABLE_MR: usize = 4;

/// Writes (or adds) the first `rows × cols` of `acc` to C.
#[inline(always)]
unsafe fn store<const MR: usize>(acc: &[[f32; NR]; MR], rows: usize, c: *mut f32, ldc: usize, cols: usize, add: bool) {
    for (i, row) in acc.iter().enumerate().take(rows) {
        // SAFETY: the caller's contract covers `rows × cols` of C.
        let out = unsafe { std::slice::from_raw_parts_mut(c.add(i * ldc), cols) };
        if add {
            out.iter_mut().zip(row).for_each(|(o, v)| *o += *v);
        } else {
            out.copy_from_slice(&row[..cols]);
        }
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn micro_portable(
    k: usize,
    a: Lhs,
    rows: usize,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    cols: usize,
    accumulate: bool,
    _ahead: Ahead,
) {
    const MR: usize = PORTABLE_MR;
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
    unsafe { store(&acc, rows, c, ldc, cols, accumulate) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{store, Ahead, Lhs, NR};
    use std::arch::x86_64::*;

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

    /// The AVX-512 micro-kernel: up to [`AVX512_MR`] rows, each call run by the narrowest of the 12-, 8- and 4-row
    /// forms that holds its rows, so that a last block of few rows does not pay for twelve.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn micro_avx512(
        k: usize,
        a: Lhs,
        rows: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        cols: usize,
        accumulate: bool,
        ahead: Ahead,
    ) {
        macro_rules! form {
            ($mr:literal) => {
                match (a.columns, rows == $mr) {
                    (false, _) => micro_avx512_rows::<$mr, BY_ROWS>(k, a, rows, b, c, ldc, cols, accumulate, ahead),
                    (true, true) => {
                        micro_avx512_rows::<$mr, WHOLE_COLUMNS>(k, a, rows, b, c, ldc, cols, accumulate, ahead)
                    }
                    (true, false) => micro_avx512_rows::<$mr, COLUMNS>(k, a, rows, b, c, ldc, cols, accumulate, ahead),
                }
            };
        }
        // SAFETY: the caller's contract in `Kernels::micro`, with `rows` within each form's.
        unsafe {
            match rows {
                9.. => form!(12),
                5..=8 => form!(8),
                _ => form!(4),
            }
        }
    }

    /// How [`micro_avx512_rows`] reads A: by rows; by columns ([`Lhs::columns`]); or by columns with every one of
    /// the form's rows real, so that a step's `MR` values are read at fixed offsets from one pointer.
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
    #[allow(clippy::too_many_arguments)]
    unsafe fn micro_avx512_rows<const MR: usize, const READ: u8>(
        k: usize,
        a: Lhs,
        rows: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        cols: usize,
        accumulate: bool,
        ahead: Ahead,
    ) {
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
            // Two loops, so that a call with nothing to ask ahead pays nothing for it; a whole block of twelve rows
            // with nothing to ask runs the loop written in assembly.
            if READ == BY_ROWS && MR == 12 && rows == 12 && ahead.lines == 0 && k > 0 {
                let acc: &mut [[__m512; 2]; 12] = (&mut acc[..]).try_into().expect("MR is 12");
                sums12(k, a.at, a.ld, b, acc);
            } else if ahead.lines == 0 {
                for p in 0..k {
                    step!(p);
                }
            } else {
                let mut spread = Spread::new(ahead);
                for p in 0..k {
                    spread.step(k);
                    step!(p);
                }
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
                store(&spill, rows, c, ldc, cols, accumulate);
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
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::needless_range_loop)] // register tiles indexed in lock step
    pub unsafe fn micro_avx2(
        k: usize,
        a: Lhs,
        rows: usize,
        b: *const f32,
        c: *mut f32,
        ldc: usize,
        cols: usize,
        accumulate: bool,
        ahead: Ahead,
    ) {
        const MR: usize = AVX2_MR;
        // SAFETY: (whole body) the caller's contract in `Kernels::micro`.
        unsafe {
            let (row, step) = a.strides();
            let rp: [*const f32; MR] = std::array::from_fn(|i| a.at.add(i.min(rows - 1) * row));
            let mut acc = [[_mm256_setzero_ps(); 4]; MR];
            macro_rules! step {
                ($p:expr) => {{
                    let p = $p;
                    let av: [__m256; MR] = std::array::from_fn(|i| _mm256_set1_ps(*rp[i].add(p * step)));
                    for j in 0..4 {
                        let bj = _mm256_loadu_ps(b.add(p * NR + 8 * j));
                        for i in 0..MR {
                            acc[i][j] = _mm256_fmadd_ps(av[i], bj, acc[i][j]);
                        }
                    }
                }};
            }
            if ahead.lines == 0 {
                for p in 0..k {
                    step!(p);
                }
            } else {
                let mut spread = Spread::new(ahead);
                for p in 0..k {
                    spread.step(k);
                    step!(p);
                }
            }
            let mut spill = [[0.0f32; NR]; MR];
            for (s, row) in spill.iter_mut().zip(&acc) {
                for (j, v) in row.iter().enumerate() {
                    _mm256_storeu_ps(s.as_mut_ptr().add(8 * j), *v);
                }
            }
            store(&spill, rows, c, ldc, cols, accumulate);
        }
    }
}
