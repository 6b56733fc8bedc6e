//! The bf16 products of x86-64 ([`crate::kernels::bf16`]'s `amx` and `avx512bf16` kernels): AMX tiles and
//! `vdpbf16ps`, the tile state's grant and configuration, and the rounding of activations to bf16 with AVX512_BF16.

use super::{BLOCK, KB};
use crate::kernels::NR;
use std::arch::asm;
use std::arch::x86_64::*;
use std::sync::OnceLock;

/// Linux's `arch_prctl` request for permission to use a dynamically enabled state component, and the
/// component of AMX's tile data.
const ARCH_REQ_XCOMP_PERM: libc::c_ulong = 0x1023;
const XFEATURE_XTILEDATA: libc::c_ulong = 18;

/// Whether Linux lets this process use AMX's tile data (asked once, for the whole process). Without the
/// grant, the first tile instruction raises SIGILL; other systems are not asked and get `false`.
pub fn amx_granted() -> bool {
    static GRANTED: OnceLock<bool> = OnceLock::new();
    *GRANTED.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: arch_prctl with ARCH_REQ_XCOMP_PERM takes two integers and changes only the permission.
            unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 }
        }
        #[cfg(not(target_os = "linux"))]
        false
    })
}

/// The tile configuration: palette 1; tmm0–3 the four 16 × 16 f32 sums, tmm4–5 two 16 × 32 bf16 blocks of A,
/// tmm6–7 two 16 (pairs of `k`) × 16 (columns) blocks of B; 64 bytes a row each.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);
static CONFIG: TileConfig = {
    let mut c = [0u8; 64];
    c[0] = 1;
    let mut t = 0;
    while t < 8 {
        c[16 + 2 * t] = 64; // bytes per row (u16, little-endian)
        c[48 + t] = 16; // rows
        t += 1;
    }
    TileConfig(c)
};

/// # Safety
/// The CPU has AMX and [`amx_granted`] said yes.
pub unsafe fn amx_configure() {
    // SAFETY: the caller's contract; the configuration is a valid palette-1 layout.
    unsafe { asm!("ldtilecfg [{}]", in(reg) CONFIG.0.as_ptr(), options(nostack, readonly)) };
}

/// # Safety
/// As [`amx_configure`].
pub unsafe fn amx_release() {
    // SAFETY: the caller's contract.
    unsafe { asm!("tilerelease", options(nostack, nomem)) };
}

/// # Safety
/// `Kernel::block`'s contract, the thread configured by [`amx_configure`].
pub unsafe fn amx_block(kp: usize, a: *const u16, rows: usize, panel: *const u16, out: &mut [f32; BLOCK * NR]) {
    let lda = kp * 2; // bytes between rows of A
    let ldb = 2 * NR * 2; // bytes between rows (pairs of k) of a panel
    let ldc = NR * 4;
    let two = rows > 16;
    let a1 = a.wrapping_add(16 * kp);
    // SAFETY: (whole body) the tiles read 16 rows of 64 bytes at the strides above: A's rows 0..16 (and
    // 16..32 when `two`) of `kp`, padded to 16 by the caller; the panel's `kp/2` rows of `2·NR` values; and
    // they write `out`'s 32 × 32 floats. The tile registers are no one else's: the compiler never uses them.
    unsafe {
        asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nostack, nomem));
        let mut p = 0;
        while p < kp {
            let b = panel.add(p * NR); // (p/2) rows of 2·NR
            asm!(
                "tileloadd tmm4, [{a} + {lda}*1]",
                "tileloadd tmm6, [{b} + {ldb}*1]",
                "tileloadd tmm7, [{b2} + {ldb}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                a = in(reg) a.add(p), b = in(reg) b, b2 = in(reg) b.add(NR), lda = in(reg) lda, ldb = in(reg) ldb,
                options(nostack, readonly)
            );
            if two {
                asm!(
                    "tileloadd tmm5, [{a} + {lda}*1]",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    "tdpbf16ps tmm3, tmm5, tmm7",
                    a = in(reg) a1.add(p), lda = in(reg) lda,
                    options(nostack, readonly)
                );
            }
            p += KB;
        }
        let c = out.as_mut_ptr();
        asm!(
            "tilestored [{c} + {ldc}*1], tmm0",
            "tilestored [{c1} + {ldc}*1], tmm1",
            c = in(reg) c, c1 = in(reg) c.add(16), ldc = in(reg) ldc,
            options(nostack)
        );
        if two {
            asm!(
                "tilestored [{c} + {ldc}*1], tmm2",
                "tilestored [{c1} + {ldc}*1], tmm3",
                c = in(reg) c.add(16 * NR), c1 = in(reg) c.add(16 * NR + 16), ldc = in(reg) ldc,
                options(nostack)
            );
        }
    }
}

/// # Safety
/// `Kernel::block`'s contract, on a CPU with AVX512_BF16.
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
pub unsafe fn dot_block(kp: usize, a: *const u16, rows: usize, panel: *const u16, out: &mut [f32; BLOCK * NR]) {
    const MR: usize = 8;
    let mut i0 = 0;
    while i0 < rows {
        let r = MR.min(rows - i0);
        // SAFETY: (whole loop) rows past `rows` repeat the last one; their sums are dropped. A's rows hold `kp`
        // values, the panel `kp/2` rows of 2·NR.
        unsafe {
            let rp: [*const u32; MR] = std::array::from_fn(|i| a.add((i0 + i.min(r - 1)) * kp).cast::<u32>());
            let mut acc = [[_mm512_setzero_ps(); 2]; MR];
            for pair in 0..kp / 2 {
                let b = panel.add(pair * 2 * NR);
                let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(b.cast()));
                let b1: __m512bh = std::mem::transmute(_mm512_loadu_si512(b.add(NR).cast()));
                for i in 0..MR {
                    let av: __m512bh = std::mem::transmute(_mm512_set1_epi32(rp[i].add(pair).read_unaligned() as i32));
                    acc[i][0] = _mm512_dpbf16_ps(acc[i][0], av, b0);
                    acc[i][1] = _mm512_dpbf16_ps(acc[i][1], av, b1);
                }
            }
            for (i, row) in acc.iter().enumerate().take(r) {
                let o = out.as_mut_ptr().add((i0 + i) * NR);
                _mm512_storeu_ps(o, row[0]);
                _mm512_storeu_ps(o.add(16), row[1]);
            }
        }
        i0 += r;
    }
}

/// `out[i] = bf16(src[i])`, rounding to nearest even, 32 at a time.
///
/// # Safety
/// The CPU has AVX512_BF16; `out` is as long as `src`.
#[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
pub unsafe fn round(src: &[f32], out: &mut [u16]) {
    let mut i = 0;
    // SAFETY: every access is below `src.len()` = `out.len()`.
    unsafe {
        while i + 32 <= src.len() {
            let lo = _mm512_loadu_ps(src.as_ptr().add(i));
            let hi = _mm512_loadu_ps(src.as_ptr().add(i + 16));
            let v: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
            _mm512_storeu_si512(out.as_mut_ptr().add(i).cast(), v);
            i += 32;
        }
    }
    for j in i..src.len() {
        out[j] = super::to_bf16(src[j]);
    }
}
