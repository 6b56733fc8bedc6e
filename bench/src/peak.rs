//! What the benchmark workers share: this machine's fp32 FMA peak, which `bench encode` and `bench train` divide
//! their FLOP by, and the peak resident set of the calling process.

use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// FLOP done by one thread in `iters` rounds of 16 chains, and the ISA used.
fn fma_thread(iters: u64) -> (f64, &'static str) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked above).
            let sink = unsafe { x86::fma512(iters) };
            std::hint::black_box(sink);
            return (iters as f64 * 16.0 * 16.0 * 2.0, "AVX-512");
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA (checked above).
            let sink = unsafe { x86::fma256(iters) };
            std::hint::black_box(sink);
            return (iters as f64 * 16.0 * 8.0 * 2.0, "AVX2+FMA");
        }
    }
    let mut acc = [1.0f32; 16];
    for _ in 0..iters {
        for a in &mut acc {
            *a = a.mul_add(std::hint::black_box(1.000_000_1), 1e-7);
        }
    }
    std::hint::black_box(acc);
    (iters as f64 * 16.0 * 2.0, "scalar")
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;
    use std::arch::x86_64::*;

    /// Whether the CPU has AMX-BF16 (CPUID leaf 7, EDX bit 22) and Linux grants this process the tile state
    /// (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`).
    pub fn amx_granted() -> bool {
        // SAFETY: CPUID exists on every x86_64 CPU; leaf 7 is read only when the maximum leaf covers it.
        #[allow(unused_unsafe)]
        let amx = unsafe { __cpuid_count(0, 0).eax >= 7 && __cpuid_count(7, 0).edx & (1 << 22) != 0 };
        // SAFETY: arch_prctl with ARCH_REQ_XCOMP_PERM takes two integers and changes only the permission.
        amx && cfg!(target_os = "linux") && unsafe { libc::syscall(libc::SYS_arch_prctl, 0x1023, 18) } == 0
    }

    /// `iters` rounds of 4 independent `tdpbf16ps` (tmm0–3 += tmm4–5 · tmm6–7), from zeroed tiles.
    ///
    /// # Safety
    /// [`amx_granted`] said yes.
    pub unsafe fn amx(iters: u64) {
        #[repr(C, align(64))]
        struct Config([u8; 64]);
        let mut config = Config([0; 64]);
        config.0[0] = 1;
        for t in 0..8 {
            config.0[16 + 2 * t] = 64;
            config.0[48 + t] = 16;
        }
        // SAFETY: the caller's contract; a valid palette-1 configuration; the tiles are no one else's.
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) config.0.as_ptr(), options(nostack, readonly));
            asm!(
                "tilezero tmm0",
                "tilezero tmm1",
                "tilezero tmm2",
                "tilezero tmm3",
                "tilezero tmm4",
                "tilezero tmm5",
                "tilezero tmm6",
                "tilezero tmm7",
                options(nostack, nomem)
            );
            for _ in 0..iters {
                asm!(
                    "tdpbf16ps tmm0, tmm4, tmm6",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    "tdpbf16ps tmm3, tmm5, tmm7",
                    options(nostack, nomem)
                );
            }
            asm!("tilerelease", options(nostack, nomem));
        }
    }

    #[target_feature(enable = "avx512f,avx512bf16")]
    pub unsafe fn dpbf16(iters: u64) -> f32 {
        let one: __m512bh = std::mem::transmute(_mm512_set1_epi16(0x3f80));
        let mut acc = [_mm512_set1_ps(1.0); 16];
        for _ in 0..iters {
            for v in &mut acc {
                *v = _mm512_dpbf16_ps(*v, one, one);
            }
        }
        acc.iter().map(|v| _mm512_reduce_add_ps(*v)).sum()
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma512(iters: u64) -> f32 {
        let (a, b) = (_mm512_set1_ps(1.000_000_1), _mm512_set1_ps(1e-7));
        let mut acc = [_mm512_set1_ps(1.0); 16];
        for _ in 0..iters {
            for v in &mut acc {
                *v = _mm512_fmadd_ps(*v, a, b);
            }
        }
        acc.iter().map(|v| _mm512_reduce_add_ps(*v)).sum()
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma256(iters: u64) -> f32 {
        let (a, b) = (_mm256_set1_ps(1.000_000_1), _mm256_set1_ps(1e-7));
        let mut acc = [_mm256_set1_ps(1.0); 16];
        for _ in 0..iters {
            for v in &mut acc {
                *v = _mm256_fmadd_ps(*v, a, b);
            }
        }
        let mut lanes = [0f32; 8];
        acc.iter()
            .map(|v| {
                _mm256_storeu_ps(lanes.as_mut_ptr(), *v);
                lanes.iter().sum::<f32>()
            })
            .sum()
    }
}

fn thread_cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// GFLOP/s of fp32 fused multiply-adds on `n` threads, each running 16 independent accumulator chains of the widest
/// FMA this CPU has (AVX-512, else AVX2+FMA); best of 5 rounds. Each thread's FLOP count is divided by its own CPU
/// time (`peak_gflops`: the cores' peak, whatever else runs on the machine); `wall_gflops` divides by wall time
/// instead (what this process got).
pub fn fma_peak(n: usize) -> Value {
    let iters = 20_000_000u64;
    let mut best = 0f64;
    let mut isa = "";
    let mut wall_best = 0f64;
    for _ in 0..5 {
        let start = Instant::now();
        // Each thread's FLOP over its own CPU time: on a shared machine, time spent descheduled does not count.
        let results: Vec<(f64, &str, f64)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|_| {
                    s.spawn(move || {
                        let cpu = thread_cpu_seconds();
                        let (flop, isa) = fma_thread(iters);
                        (flop, isa, thread_cpu_seconds() - cpu)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let wall = start.elapsed().as_secs_f64();
        isa = results[0].1;
        best = best.max(results.iter().map(|r| r.0 / r.2).sum::<f64>() / 1e9);
        wall_best = wall_best.max(results.iter().map(|r| r.0).sum::<f64>() / wall / 1e9);
        std::thread::sleep(Duration::from_millis(50));
    }
    json!({ "peak_gflops": best, "wall_gflops": wall_best, "isa": isa, "threads": n })
}

/// FLOP done by one thread in `iters` rounds of bf16 products, and the instructions used: AMX (4 tiles of
/// 16 × 16 f32 sums, each `tdpbf16ps` 16 × 16 × 32 multiply-adds) where the CPU has it and Linux grants the tile
/// state, else AVX512_BF16 (16 chains of `vdpbf16ps`, 32 multiply-adds each); `None` without either.
fn bf16_thread(iters: u64) -> Option<(f64, &'static str)> {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::amx_granted() {
            // SAFETY: AMX-BF16 is present and the tile state granted (checked by `amx_granted`).
            unsafe { x86::amx(iters) };
            return Some((iters as f64 * 4.0 * 16.0 * 16.0 * 32.0 * 2.0, "AMX-BF16"));
        }
        if std::arch::is_x86_feature_detected!("avx512bf16") {
            // SAFETY: the CPU has AVX512_BF16 (checked above).
            let sink = unsafe { x86::dpbf16(iters) };
            std::hint::black_box(sink);
            return Some((iters as f64 * 16.0 * 32.0 * 2.0, "AVX512_BF16"));
        }
    }
    let _ = iters;
    None
}

/// [`fma_peak`] for bf16 products ([`bf16_thread`]); `{"peak_gflops": null}` on a CPU without them.
pub fn bf16_peak(n: usize) -> Value {
    let iters = 2_000_000u64;
    let mut best = 0f64;
    let mut isa = None;
    for _ in 0..5 {
        let results: Vec<Option<(f64, &str, f64)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|_| {
                    s.spawn(move || {
                        let cpu = thread_cpu_seconds();
                        bf16_thread(iters).map(|(flop, isa)| (flop, isa, thread_cpu_seconds() - cpu))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let Some(results) = results.into_iter().collect::<Option<Vec<_>>>() else {
            return json!({ "peak_gflops": null, "isa": null, "threads": n });
        };
        isa = Some(results[0].1);
        best = best.max(results.iter().map(|r| r.0 / r.2).sum::<f64>() / 1e9);
        std::thread::sleep(Duration::from_millis(50));
    }
    json!({ "peak_gflops": best, "isa": isa, "threads": n })
}

/// The peak resident set of this process so far, in bytes (`getrusage`'s `ru_maxrss`).
pub fn peak_rss_bytes() -> u64 {
    // SAFETY: getrusage fills the zeroed struct.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    usage.ru_maxrss.max(0) as u64 * 1024
}
