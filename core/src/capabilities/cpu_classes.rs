//! The CPU class table and the run-time check of which classes this CPU satisfies.
//!
//! A class is a named feature set that kernels are compiled for. Names follow the seed's
//! `vendor-microarchitecture` spelling ("intel-haswell"): the microarchitecture that first shipped the set, so
//! a user can tell from the name which machines run it. Two exceptions, both deliberate:
//!
//! - `portable` is the baseline of every architecture. It requires nothing, so every CPU satisfies it and
//!   [`native_cpu_class`] always has an answer; naming it after a microarchitecture ("intel-westmere") would
//!   promise features (SSE4.2, POPCNT) that minimal virtual CPUs such as QEMU's `qemu64` do not report.
//! - Arm classes are named for the vector extension (`arm-neon`, `arm-sve`, `arm-sve2`), because the same
//!   extension ships in cores from many vendors (Neoverse, Graviton, Grace, Apple), and no one core names it.
//!
//! Within one architecture the table is ordered by capability and each class requires everything the class
//! before it requires, so "the most capable class this CPU satisfies" is the last one it satisfies.

/// The instruction-set architecture a class belongs to, as `std::env::consts::ARCH` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuArch {
    /// Every architecture: the `portable` baseline.
    Any,
    X86_64,
    Aarch64,
}

impl CpuArch {
    /// The spelling `std::env::consts::ARCH` uses, or "any".
    pub fn as_str(self) -> &'static str {
        match self {
            CpuArch::Any => "any",
            CpuArch::X86_64 => "x86_64",
            CpuArch::Aarch64 => "aarch64",
        }
    }

    /// Whether code built for this target can run classes of this architecture.
    pub fn matches_target(self) -> bool {
        match self {
            CpuArch::Any => true,
            CpuArch::X86_64 => cfg!(target_arch = "x86_64"),
            CpuArch::Aarch64 => cfg!(target_arch = "aarch64"),
        }
    }
}

/// One CPU class: its name, its architecture, the features it requires (in the spelling of
/// `is_x86_feature_detected!` / `is_aarch64_feature_detected!`, plus `amx-*` read from CPUID), and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuClass {
    pub name: &'static str,
    pub arch: CpuArch,
    pub features: &'static [&'static str],
    pub doc: &'static str,
}

// Each x86 class is the one before it plus what its microarchitecture added (`extend` checks the lengths at compile
// time), so the table states every feature once.
const HASWELL: &[&str] = &["avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "popcnt", "lzcnt"];
const SKYLAKE: &[&str] = &extend::<13>(HASWELL, &["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"]);
const ICELAKE: &[&str] =
    &extend::<18>(SKYLAKE, &["avx512vnni", "avx512vbmi", "avx512vbmi2", "avx512bitalg", "avx512vpopcntdq"]);
const GENOA: &[&str] = &extend::<19>(ICELAKE, &["avx512bf16"]);
const SAPPHIRERAPIDS: &[&str] = &extend::<23>(GENOA, &["avx512fp16", "amx-tile", "amx-bf16", "amx-int8"]);

/// `base` followed by `added`, as an array of exactly `N` names.
const fn extend<const N: usize>(base: &[&'static str], added: &[&'static str]) -> [&'static str; N] {
    assert!(base.len() + added.len() == N, "N must be the two lists' total length");
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < base.len() { base[i] } else { added[i - base.len()] };
        i += 1;
    }
    out
}

/// Every CPU class, grouped by architecture and ordered by capability within it.
pub static CPU_CLASSES: &[CpuClass] = &[
    CpuClass {
        name: "portable",
        arch: CpuArch::Any,
        features: &[],
        doc: "Plain Rust with no feature beyond the target's baseline; runs on every CPU.",
    },
    CpuClass {
        name: "intel-haswell",
        arch: CpuArch::X86_64,
        features: HASWELL,
        doc: "AVX2, FMA, F16C and BMI1/2: Intel Haswell (2013) and later, AMD Zen and later.",
    },
    CpuClass {
        name: "intel-skylake",
        arch: CpuArch::X86_64,
        features: SKYLAKE,
        doc: "Haswell plus AVX-512 F/CD/BW/DQ/VL: Intel Skylake-SP/X (2017) and later server cores.",
    },
    CpuClass {
        name: "intel-icelake",
        arch: CpuArch::X86_64,
        features: ICELAKE,
        doc: "Skylake plus AVX-512 VNNI, VBMI, VBMI2, BITALG and VPOPCNTDQ: Intel Ice Lake (2019) and later.",
    },
    CpuClass {
        name: "amd-genoa",
        arch: CpuArch::X86_64,
        features: GENOA,
        doc: "Ice Lake plus AVX-512 BF16, without FP16 or AMX: AMD Zen 4 (Genoa, 2022) and Zen 5.",
    },
    CpuClass {
        name: "intel-sapphirerapids",
        arch: CpuArch::X86_64,
        features: SAPPHIRERAPIDS,
        doc: "Genoa plus AVX-512 FP16 and AMX tiles (BF16, INT8): Intel Sapphire Rapids (2023) and later.",
    },
    CpuClass {
        name: "arm-neon",
        arch: CpuArch::Aarch64,
        features: &["neon"],
        doc: "Advanced SIMD, 128-bit: every 64-bit Arm core.",
    },
    CpuClass {
        name: "arm-sve",
        arch: CpuArch::Aarch64,
        features: &["neon", "sve"],
        doc: "NEON plus the Scalable Vector Extension: Neoverse V1 (Graviton3), A64FX.",
    },
    CpuClass {
        name: "arm-sve2",
        arch: CpuArch::Aarch64,
        features: &["neon", "sve", "sve2"],
        doc: "SVE plus SVE2: Neoverse N2/V2 (Graviton4, Grace) and later.",
    },
];

/// The class called `name`, whatever its architecture.
pub fn cpu_class(name: &str) -> Option<&'static CpuClass> {
    CPU_CLASSES.iter().find(|class| class.name == name)
}

/// The classes this build's target architecture can dispatch to, in table order.
pub fn compiled_cpu_classes() -> impl Iterator<Item = &'static CpuClass> {
    CPU_CLASSES.iter().filter(|class| class.arch.matches_target())
}

/// The features of `class` this CPU lacks; empty when the CPU runs it. A class of another architecture lacks
/// all of its features.
pub fn missing_features(class: &CpuClass) -> Vec<&'static str> {
    if !class.arch.matches_target() {
        return class.features.to_vec();
    }
    class.features.iter().copied().filter(|feature| !feature_detected(feature)).collect()
}

/// Whether this CPU (and its operating system, for state it must save) offers `feature`.
pub fn feature_detected(feature: &str) -> bool {
    detect::feature(feature)
}

/// The most capable class this CPU satisfies; `portable` at the least. Found once per process (every encode call
/// asks for its kernels).
pub fn native_cpu_class() -> &'static str {
    static NATIVE: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    NATIVE.get_or_init(|| {
        compiled_cpu_classes().filter(|class| missing_features(class).is_empty()).last().map_or("portable", |c| c.name)
    })
}

#[cfg(target_arch = "x86_64")]
mod detect {
    /// The feature names of the table. `std::is_x86_feature_detected!` takes literals only, hence the match.
    pub fn feature(name: &str) -> bool {
        match name {
            "avx" => std::is_x86_feature_detected!("avx"),
            "avx2" => std::is_x86_feature_detected!("avx2"),
            "fma" => std::is_x86_feature_detected!("fma"),
            "f16c" => std::is_x86_feature_detected!("f16c"),
            "bmi1" => std::is_x86_feature_detected!("bmi1"),
            "bmi2" => std::is_x86_feature_detected!("bmi2"),
            "popcnt" => std::is_x86_feature_detected!("popcnt"),
            "lzcnt" => std::is_x86_feature_detected!("lzcnt"),
            "avx512f" => std::is_x86_feature_detected!("avx512f"),
            "avx512cd" => std::is_x86_feature_detected!("avx512cd"),
            "avx512bw" => std::is_x86_feature_detected!("avx512bw"),
            "avx512dq" => std::is_x86_feature_detected!("avx512dq"),
            "avx512vl" => std::is_x86_feature_detected!("avx512vl"),
            "avx512vnni" => std::is_x86_feature_detected!("avx512vnni"),
            "avx512vbmi" => std::is_x86_feature_detected!("avx512vbmi"),
            "avx512vbmi2" => std::is_x86_feature_detected!("avx512vbmi2"),
            "avx512bitalg" => std::is_x86_feature_detected!("avx512bitalg"),
            "avx512vpopcntdq" => std::is_x86_feature_detected!("avx512vpopcntdq"),
            "avx512bf16" => std::is_x86_feature_detected!("avx512bf16"),
            "avx512fp16" => std::is_x86_feature_detected!("avx512fp16"),
            "amx-tile" => amx(AMX_TILE),
            "amx-bf16" => amx(AMX_BF16),
            "amx-int8" => amx(AMX_INT8),
            _ => false,
        }
    }

    // CPUID.(EAX=7,ECX=0):EDX bits of the AMX features.
    const AMX_BF16: u32 = 1 << 22;
    const AMX_TILE: u32 = 1 << 24;
    const AMX_INT8: u32 = 1 << 25;
    // XCR0 bits the OS sets when it saves tile state: XTILECFG (17) and XTILEDATA (18).
    const XCR0_TILE_STATE: u64 = (1 << 17) | (1 << 18);

    /// AMX by CPUID and XCR0, because `is_x86_feature_detected!("amx-tile")` is still unstable (rustc 1.95).
    /// The CPU bit alone is not enough: without the OS saving tile state, the first tile instruction faults.
    /// Probed once per process, as std caches its own features: CPUID traps to the hypervisor on a virtual
    /// machine (about a microsecond each), and every encode call asks for its kernels.
    fn amx(bit: u32) -> bool {
        static AMX_EDX: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        *AMX_EDX.get_or_init(amx_probe) & bit != 0
    }

    /// The AMX bits of CPUID.(EAX=7,ECX=0):EDX that the OS also saves tile state for; 0 for none.
    // `__cpuid_count` is safe since rustc 1.94 and unsafe before; the MSRV is 1.89, so both must compile.
    #[allow(unused_unsafe)]
    fn amx_probe() -> u32 {
        use std::arch::x86_64::__cpuid_count;
        let bit = AMX_BF16 | AMX_TILE | AMX_INT8;
        // SAFETY: CPUID exists on every x86_64 CPU; leaf 7 is read only when the maximum leaf covers it.
        let leaf7 = unsafe {
            if __cpuid_count(0, 0).eax < 7 {
                return 0;
            }
            __cpuid_count(7, 0)
        };
        if leaf7.edx & bit == 0 || !std::is_x86_feature_detected!("xsave") {
            return 0;
        }
        // OSXSAVE (CPUID.1:ECX bit 27) says the OS enabled XGETBV; std's "xsave" is the CPU bit only.
        // SAFETY: as above.
        let osxsave = unsafe { __cpuid_count(1, 0).ecx } & (1 << 27) != 0;
        if osxsave && xcr0() & XCR0_TILE_STATE == XCR0_TILE_STATE {
            leaf7.edx & bit
        } else {
            0
        }
    }

    fn xcr0() -> u64 {
        #[target_feature(enable = "xsave")]
        unsafe fn read() -> u64 {
            // SAFETY: the caller checked XSAVE and OSXSAVE, so XGETBV with ECX=0 is defined.
            unsafe { std::arch::x86_64::_xgetbv(0) }
        }
        // SAFETY: only reached after the XSAVE and OSXSAVE checks in `amx`.
        unsafe { read() }
    }
}

#[cfg(target_arch = "aarch64")]
mod detect {
    pub fn feature(name: &str) -> bool {
        match name {
            "neon" => std::arch::is_aarch64_feature_detected!("neon"),
            "sve" => std::arch::is_aarch64_feature_detected!("sve"),
            "sve2" => std::arch::is_aarch64_feature_detected!("sve2"),
            _ => false,
        }
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod detect {
    /// Architectures without classes of their own run `portable` only, which requires nothing.
    pub fn feature(_name: &str) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_spelled_vendor_dash_microarchitecture() {
        let mut seen = HashSet::new();
        for class in CPU_CLASSES {
            assert!(seen.insert(class.name), "{} twice", class.name);
            let valid = class.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            assert!(valid, "{}", class.name);
            assert!(class.name == "portable" || class.name.split_once('-').is_some(), "{}", class.name);
            assert!(!class.doc.is_empty());
        }
    }

    #[test]
    fn each_class_requires_everything_the_class_before_it_requires() {
        for arch in [CpuArch::X86_64, CpuArch::Aarch64] {
            let classes: Vec<_> = CPU_CLASSES.iter().filter(|c| c.arch == arch).collect();
            for pair in classes.windows(2) {
                for feature in pair[0].features {
                    assert!(pair[1].features.contains(feature), "{} lacks {feature} of {}", pair[1].name, pair[0].name);
                }
                assert!(pair[1].features.len() > pair[0].features.len());
            }
        }
    }

    #[test]
    fn every_feature_of_the_build_architecture_has_a_detector() {
        // A misspelt feature would silently read as absent, so each one must have its own arm in `detect`.
        let source = include_str!("cpu_classes.rs");
        for feature in compiled_cpu_classes().flat_map(|c| c.features.iter().copied()) {
            assert!(source.contains(&format!("\"{feature}\" => ")), "no detector arm for {feature}");
            let _ = feature_detected(feature); // must not panic
        }
    }

    #[test]
    fn the_native_class_is_satisfied_and_nothing_after_it_is() {
        let native = cpu_class(native_cpu_class()).unwrap();
        assert!(missing_features(native).is_empty());
        assert!(native.arch.matches_target());
        let after: Vec<_> = compiled_cpu_classes().skip_while(|c| c.name != native.name).skip(1).collect();
        for class in after {
            assert!(!missing_features(class).is_empty(), "{} is satisfied but not native", class.name);
        }
    }

    #[test]
    fn portable_requires_nothing_and_other_architectures_miss_everything() {
        assert!(missing_features(cpu_class("portable").unwrap()).is_empty());
        let foreign = if cfg!(target_arch = "aarch64") { "intel-haswell" } else { "arm-sve2" };
        let class = cpu_class(foreign).unwrap();
        assert_eq!(missing_features(class), class.features.to_vec());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn detection_agrees_with_std_where_std_can_tell() {
        assert_eq!(feature_detected("avx2"), std::is_x86_feature_detected!("avx2"));
        assert_eq!(feature_detected("avx512f"), std::is_x86_feature_detected!("avx512f"));
        // Tiles without the OS saving them, or without AVX-512, would be a detection bug.
        if feature_detected("amx-tile") {
            assert!(feature_detected("avx512f"));
        }
        assert!(!feature_detected("no-such-feature"));
    }
}
