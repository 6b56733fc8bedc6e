//! Kernels, the layer of core's compute below the families: GEMM over packed panels ([`gemm`]), self-attention
//! over a batch of sequences ([`attention`], and its training pass), the row-wise steps ([`math`]: norms,
//! activations, softmax) and the steps of a training pass that are not matrix products ([`ops`]), per CPU class and
//! precision. They know no model.
//!
//! The kernels of each CPU class: a matrix micro-kernel written with `std::arch` intrinsics per class, and the
//! row-wise steps of [`math`] compiled with the class's features, one file per instruction set under `isa/`; this
//! module keeps the op table ([`Kernels`], filled by [`Kernels::for_class`]) and the calls through it.
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
mod isa;
pub(crate) mod math;
pub(crate) mod ops;

use crate::error::{Error, Result};

/// Columns of one packed right-hand panel: two AVX-512 vectors.
pub const NR: usize = 32;

/// A micro-kernel: computes one [`MicroTile`].
pub type Micro = unsafe fn(MicroTile);

/// One micro-kernel call, `C[rows × cols] (+)= A[rows × k] · B[k × NR]`: A where [`Lhs`] says, the packed panel at
/// `b` (`k` rows of `NR`), C's row `i` at `c + i·ldc`; `rows` ≤ the kernel's `mr`, `cols` ≤ `NR`; `accumulate` adds
/// to C; `ahead`, memory to ask into L2 meanwhile. One value rather than nine arguments, so that the op table and
/// every kernel name the call's parts once; the kernels take it by value and read its fields into registers.
#[derive(Clone, Copy)]
pub struct MicroTile {
    pub k: usize,
    pub a: Lhs,
    pub rows: usize,
    pub b: *const f32,
    pub c: *mut f32,
    pub ldc: usize,
    pub cols: usize,
    pub accumulate: bool,
    pub ahead: Ahead,
}

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
    normalize: unsafe fn(&mut [f32]),
    bias_tile: unsafe fn(*mut f32, usize, usize, &[f32], Option<activation::Activation>),
    adamw: AdamWKernel,
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// One row of the op table: a class's name, its micro-kernel's rows and the micro-kernel, and the module of its
/// row-wise steps.
macro_rules! kernels {
    ($name:literal, $mr:expr, $micro:path, $($rowwise:ident)::+) => {
        Kernels {
            name: $name,
            mr: $mr,
            micro: $micro,
            bf16: None,
            layer_norm: $($rowwise)::+::layer_norm,
            bias_gelu: $($rowwise)::+::bias_gelu,
            gelu_backward: $($rowwise)::+::gelu_backward,
            bias_quick_gelu: $($rowwise)::+::bias_quick_gelu,
            bias_gelu_tanh: $($rowwise)::+::bias_gelu_tanh,
            add: $($rowwise)::+::add,
            softmax: $($rowwise)::+::softmax,
            scale: $($rowwise)::+::scale,
            normalize: $($rowwise)::+::normalize,
            bias_tile: $($rowwise)::+::bias_tile,
            adamw: $($rowwise)::+::adamw,
        }
    };
}

impl Kernels {
    pub fn portable() -> Kernels {
        kernels!("portable", isa::portable::MR, isa::portable::micro, isa::portable::rowwise)
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
                let kernels = kernels!("avx512", isa::x86::AVX512_MR, isa::x86::micro_avx512, isa::x86::rowwise_avx512);
                return Ok(Kernels { bf16: bf16::Kernel::for_features(class.features), ..kernels });
            }
            if has("avx2") && has("fma") {
                return Ok(kernels!("avx2", isa::x86::AVX2_MR, isa::x86::micro_avx2, isa::x86::rowwise_avx2));
            }
        }
        let _ = has;
        Ok(Kernels::portable())
    }

    /// See [`MicroTile`].
    ///
    /// # Safety
    /// The pointers must cover what [`MicroTile`] reads and writes, with `1 ≤ rows ≤ self.mr` and `1 ≤ cols ≤ NR`.
    #[inline(always)]
    pub unsafe fn micro(&self, tile: MicroTile) {
        let MicroTile { k, rows, cols, ahead, .. } = tile;
        debug_assert!((1..=self.mr).contains(&rows) && (1..=NR).contains(&cols) && ahead.lines <= 2 * k);
        // SAFETY: the features were checked in `for_class`; the caller vouches for the pointers.
        unsafe { (self.micro)(tile) }
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
    /// `x` scaled to unit length ([`math::normalize`]): the one normalisation of every verb's rows.
    pub fn normalize(&self, x: &mut [f32]) {
        // SAFETY: as above.
        unsafe { (self.normalize)(x) }
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
