//! The instruction sets' kernels, one file per ISA: its matrix micro-kernels ([`crate::kernels::Micro`]) and its
//! row-wise steps ([`crate::kernels::math`] compiled with its features, by [`rowwise!`]), which
//! [`crate::kernels::Kernels::for_class`] puts in the op table. A port to another ISA (NEON, say) is one more file
//! here and one more line in that table.
//!
//! - [`portable`]: plain Rust, every architecture.
//! - `x86`: AVX2 and AVX-512 (x86-64).
//! - `x86_bf16`: the bf16 products of AMX and AVX512_BF16 ([`crate::kernels::bf16`]).

use super::{MicroTile, NR};

/// The `k` step of every bf16 kernel ([`crate::kernels::bf16`]): 32 bf16 values, one AMX tile row of A.
pub const KB: usize = 32;
/// Rows of one bf16 block: two AMX tiles of 16.
pub const BLOCK: usize = 32;

/// f32 to bf16, rounding to nearest even; NaN stays NaN (the rounding every bf16 kernel's activations get).
#[inline]
pub fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// The row-wise steps of [`crate::kernels::math`] compiled with an ISA's features, as a module `$module` of
/// functions the op table points at (`Kernels::layer_norm` and the others).
macro_rules! rowwise {
    ($module:ident $(, $features:literal)?) => {
        pub(crate) mod $module {
            use crate::kernels::math;
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
            pub unsafe fn normalize(x: &mut [f32]) {
                math::normalize(x)
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
                activation: Option<crate::kernels::activation::Activation>,
            ) {
                use crate::kernels::activation::Activation;
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

pub(crate) mod portable;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_bf16;

/// Writes (or, `tile.accumulate`, adds) the first `rows × cols` of `acc` to the tile's C.
#[inline(always)]
pub(crate) unsafe fn store<const MR: usize>(acc: &[[f32; NR]; MR], tile: MicroTile) {
    let MicroTile { rows, c, ldc, cols, accumulate, .. } = tile;
    for (i, row) in acc.iter().enumerate().take(rows) {
        // SAFETY: the caller's contract covers `rows × cols` of C.
        let out = unsafe { std::slice::from_raw_parts_mut(c.add(i * ldc), cols) };
        if accumulate {
            out.iter_mut().zip(row).for_each(|(o, v)| *o += *v);
        } else {
            out.copy_from_slice(&row[..cols]);
        }
    }
}
