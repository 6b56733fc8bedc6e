//! The GPU class table: which kernels a device runs, by NVIDIA compute capability or AMD gfx target.
//!
//! A class id is the class's position in [`GPU_CLASSES`]; `uform_gpu_class_name` and the C device record
//! carry ids, so entries are only ever appended, never reordered or removed.
//!
//! Decisions the table encodes:
//! - NVIDIA 8.6 and 8.7 (GA10x consumer cards, Orin) are `nvidia-ampere` with 8.0: SASS built for sm_80 runs on
//!   every 8.x device, and nothing UForm dispatches needs the larger shared memory of 8.0 alone. 8.9 is
//!   separate (`nvidia-ada`) because it adds FP8 tensor cores.
//! - Blackwell is three classes, because their machine code is not interchangeable (`sm_100a` kernels do not
//!   run on 12.x, nor 12.x kernels on 10.x): `nvidia-blackwell` is the data-center family, 10.0 (B200, GB200)
//!   and 10.3 (B300, GB300), which `sm_100f` code covers; `nvidia-blackwell-thor` is Jetson Thor, which drivers
//!   of CUDA 12.8/12.9 report as 10.1 and drivers of CUDA 13 as 11.0 (one device, one class, whichever driver);
//!   `nvidia-blackwell-rtx` is 12.0 (RTX 50, RTX PRO Blackwell) and 12.1 (DGX Spark's GB10), without tcgen05
//!   and tensor memory. The two newer classes were appended, so every earlier id is unchanged.
//! - AMD is classed by ISA family: one `gfx` target per code object, CDNA for the Instinct line, RDNA for Radeon.

use crate::error::{Error, Result};
use crate::types::GpuVendor;

/// One GPU class: its name, its vendor, the compute capabilities ("major.minor") or gfx targets it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuClass {
    pub name: &'static str,
    pub vendor: GpuVendor,
    /// NVIDIA: compute capabilities as "major.minor". AMD: gfx targets without feature suffixes.
    pub targets: &'static [&'static str],
    pub doc: &'static str,
}

/// Every GPU class; a class's id is its position here.
pub static GPU_CLASSES: &[GpuClass] = &[
    GpuClass {
        name: "nvidia-volta",
        vendor: GpuVendor::Nvidia,
        targets: &["7.0", "7.2"],
        doc: "First tensor cores (FP16): V100, Jetson Xavier.",
    },
    GpuClass {
        name: "nvidia-turing",
        vendor: GpuVendor::Nvidia,
        targets: &["7.5"],
        doc: "INT8/INT4 tensor cores: T4, RTX 20.",
    },
    GpuClass {
        name: "nvidia-ampere",
        vendor: GpuVendor::Nvidia,
        targets: &["8.0", "8.6", "8.7"],
        doc: "BF16 and TF32 tensor cores, async copies: A100, A10, RTX 30, Jetson Orin.",
    },
    GpuClass {
        name: "nvidia-ada",
        vendor: GpuVendor::Nvidia,
        targets: &["8.9"],
        doc: "FP8 tensor cores: L4, L40, RTX 40.",
    },
    GpuClass {
        name: "nvidia-hopper",
        vendor: GpuVendor::Nvidia,
        targets: &["9.0"],
        doc: "TMA, warpgroup MMA, thread-block clusters, NVLink multicast: H100, H200, GH200.",
    },
    GpuClass {
        name: "nvidia-blackwell",
        vendor: GpuVendor::Nvidia,
        targets: &["10.0", "10.3"],
        doc: "Data-center Blackwell, tcgen05 and tensor memory, FP4/FP6 tensor cores: B200, B300, GB200, GB300.",
    },
    GpuClass {
        name: "amd-cdna1",
        vendor: GpuVendor::Amd,
        targets: &["gfx908"],
        doc: "First matrix cores: Instinct MI100.",
    },
    GpuClass {
        name: "amd-cdna2",
        vendor: GpuVendor::Amd,
        targets: &["gfx90a"],
        doc: "FP64 matrix cores, coherent host memory: Instinct MI200 (MI210, MI250X).",
    },
    GpuClass {
        name: "amd-cdna3",
        vendor: GpuVendor::Amd,
        targets: &["gfx940", "gfx941", "gfx942"],
        doc: "FP8 and sparse matrix cores: Instinct MI300A, MI300X, MI325X.",
    },
    GpuClass {
        name: "amd-cdna4",
        vendor: GpuVendor::Amd,
        targets: &["gfx950"],
        doc: "FP4/FP6 matrix cores: Instinct MI350, MI355X.",
    },
    GpuClass {
        name: "amd-rdna2",
        vendor: GpuVendor::Amd,
        targets: &["gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"],
        doc: "Radeon RX 6000, Radeon Pro W6000, RDNA2 APUs.",
    },
    GpuClass {
        name: "amd-rdna3",
        vendor: GpuVendor::Amd,
        targets: &["gfx1100", "gfx1101", "gfx1102", "gfx1103"],
        doc: "WMMA matrix instructions: Radeon RX 7000, Radeon Pro W7000, RDNA3 APUs.",
    },
    GpuClass {
        name: "amd-rdna4",
        vendor: GpuVendor::Amd,
        targets: &["gfx1200", "gfx1201"],
        doc: "FP8 WMMA: Radeon RX 9000, Radeon AI PRO R9700.",
    },
    GpuClass {
        name: "nvidia-blackwell-thor",
        vendor: GpuVendor::Nvidia,
        targets: &["10.1", "11.0"],
        doc: "Embedded Blackwell: Jetson Thor (10.1 under CUDA 12 drivers, 11.0 under CUDA 13).",
    },
    GpuClass {
        name: "nvidia-blackwell-rtx",
        vendor: GpuVendor::Nvidia,
        targets: &["12.0", "12.1"],
        doc: "Consumer and workstation Blackwell, FP4 tensor cores without tensor memory: RTX 50, RTX PRO, DGX Spark.",
    },
];

/// The spelling of the GPU class with table id `id`, `None` for an id the table does not hold.
pub fn gpu_class_name(id: i32) -> Option<&'static str> {
    usize::try_from(id).ok().and_then(|i| GPU_CLASSES.get(i)).map(|class| class.name)
}

/// The table id of a GPU class name, `None` for a name the table does not hold.
pub fn gpu_class_id(name: &str) -> Option<i32> {
    GPU_CLASSES.iter().position(|class| class.name == name).map(|i| i as i32)
}

/// Checks that `gpu_class` (the argument named `argument`) is a known GPU class name and returns the table's
/// spelling. Whether a device of that class is present is the caller's question, not this one's.
pub fn validate_gpu_class(argument: &str, gpu_class: &str) -> Result<&'static str> {
    match GPU_CLASSES.iter().find(|class| class.name == gpu_class) {
        Some(class) => Ok(class.name),
        None => {
            let known: Vec<&str> = GPU_CLASSES.iter().map(|class| class.name).collect();
            Err(Error::invalid_argument(
                argument,
                format!("names an unknown GPU class {gpu_class:?}; known classes: {}", known.join(", ")),
            ))
        }
    }
}

/// The class of an NVIDIA device of compute capability `major.minor`, `None` when the table does not know it.
pub fn nvidia_class(major: i32, minor: i32) -> Option<&'static str> {
    let capability = format!("{major}.{minor}");
    class_of(GpuVendor::Nvidia, &capability)
}

/// The class of an AMD device from its `gcnArchName` ("gfx942:sramecc+:xnack-"): the target before the first
/// colon, features stripped, since they change how code is built but not which class it is.
pub fn amd_class(gcn_arch_name: &str) -> Option<&'static str> {
    class_of(GpuVendor::Amd, amd_target(gcn_arch_name))
}

/// The gfx target of a `gcnArchName`, without its feature suffixes and surrounding whitespace.
pub fn amd_target(gcn_arch_name: &str) -> &str {
    gcn_arch_name.split(':').next().unwrap_or("").trim()
}

fn class_of(vendor: GpuVendor, target: &str) -> Option<&'static str> {
    GPU_CLASSES.iter().find(|class| class.vendor == vendor && class.targets.contains(&target)).map(|class| class.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use std::collections::HashSet;

    #[test]
    fn every_compute_capability_maps_as_documented() {
        let expected = [
            ((7, 0), "nvidia-volta"),
            ((7, 2), "nvidia-volta"),
            ((7, 5), "nvidia-turing"),
            ((8, 0), "nvidia-ampere"),
            ((8, 6), "nvidia-ampere"),
            ((8, 7), "nvidia-ampere"),
            ((8, 9), "nvidia-ada"),
            ((9, 0), "nvidia-hopper"),
            ((10, 0), "nvidia-blackwell"),
            ((10, 1), "nvidia-blackwell-thor"),
            ((10, 3), "nvidia-blackwell"),
            ((11, 0), "nvidia-blackwell-thor"),
            ((12, 0), "nvidia-blackwell-rtx"),
            ((12, 1), "nvidia-blackwell-rtx"),
        ];
        for ((major, minor), class) in expected {
            assert_eq!(nvidia_class(major, minor), Some(class), "{major}.{minor}");
        }
        let listed: usize = GPU_CLASSES.iter().filter(|c| c.vendor == GpuVendor::Nvidia).map(|c| c.targets.len()).sum();
        assert_eq!(listed, expected.len(), "a capability in the table is missing from this test");
        for (major, minor) in [(6, 0), (6, 1), (7, 1), (8, 8), (9, 1), (13, 0), (0, 0), (-1, 5)] {
            assert_eq!(nvidia_class(major, minor), None, "{major}.{minor}");
        }
    }

    #[test]
    fn every_gfx_target_maps_as_documented() {
        let expected = [
            ("gfx908", "amd-cdna1"),
            ("gfx90a", "amd-cdna2"),
            ("gfx940", "amd-cdna3"),
            ("gfx941", "amd-cdna3"),
            ("gfx942", "amd-cdna3"),
            ("gfx950", "amd-cdna4"),
            ("gfx1030", "amd-rdna2"),
            ("gfx1031", "amd-rdna2"),
            ("gfx1032", "amd-rdna2"),
            ("gfx1033", "amd-rdna2"),
            ("gfx1034", "amd-rdna2"),
            ("gfx1035", "amd-rdna2"),
            ("gfx1036", "amd-rdna2"),
            ("gfx1100", "amd-rdna3"),
            ("gfx1101", "amd-rdna3"),
            ("gfx1102", "amd-rdna3"),
            ("gfx1103", "amd-rdna3"),
            ("gfx1200", "amd-rdna4"),
            ("gfx1201", "amd-rdna4"),
        ];
        for (target, class) in expected {
            assert_eq!(amd_class(target), Some(class), "{target}");
        }
        let listed: usize = GPU_CLASSES.iter().filter(|c| c.vendor == GpuVendor::Amd).map(|c| c.targets.len()).sum();
        assert_eq!(listed, expected.len(), "a target in the table is missing from this test");
        for target in ["gfx906", "gfx1010", "gfx1150", "gfx90", "gfx", "", "7.0", "nvidia-hopper"] {
            assert_eq!(amd_class(target), None, "{target:?}");
        }
    }

    #[test]
    fn gcn_arch_names_lose_their_feature_suffixes() {
        assert_eq!(amd_class("gfx942:sramecc+:xnack-"), Some("amd-cdna3"));
        assert_eq!(amd_class("gfx90a:sramecc-:xnack+"), Some("amd-cdna2"));
        assert_eq!(amd_class("gfx1100"), Some("amd-rdna3"));
        assert_eq!(amd_target("gfx950:xnack-"), "gfx950");
        assert_eq!(amd_target(":xnack-"), "");
    }

    #[test]
    fn a_capability_never_answers_for_the_other_vendor() {
        assert_eq!(class_of(GpuVendor::Amd, "9.0"), None);
        assert_eq!(class_of(GpuVendor::Nvidia, "gfx942"), None);
    }

    #[test]
    fn ids_round_trip_and_names_are_unique() {
        let mut seen = HashSet::new();
        for (i, class) in GPU_CLASSES.iter().enumerate() {
            assert!(seen.insert(class.name));
            assert_eq!(gpu_class_name(i as i32), Some(class.name));
            assert_eq!(gpu_class_id(class.name), Some(i as i32));
            assert_eq!(validate_gpu_class("config.gpu_class", class.name), Ok(class.name));
            let prefix = match class.vendor {
                GpuVendor::Nvidia => "nvidia-",
                GpuVendor::Amd => "amd-",
                other => panic!("unexpected vendor {other:?}"),
            };
            assert!(class.name.starts_with(prefix), "{}", class.name);
        }
        assert_eq!(gpu_class_name(-1), None);
        assert_eq!(gpu_class_name(GPU_CLASSES.len() as i32), None);
        assert_eq!(gpu_class_name(i32::MAX), None);
        assert_eq!(gpu_class_id("nvidia-pascal"), None);
    }

    #[test]
    fn ids_stay_where_the_c_header_put_them() {
        // Appending is fine; moving an entry renumbers what C callers and stored records hold.
        assert_eq!(gpu_class_id("nvidia-volta"), Some(0));
        assert_eq!(gpu_class_id("nvidia-hopper"), Some(4));
        assert_eq!(gpu_class_id("amd-cdna3"), Some(8));
        assert_eq!(gpu_class_id("nvidia-blackwell"), Some(5));
        assert_eq!(gpu_class_id("amd-rdna4"), Some(12));
        assert_eq!(gpu_class_id("nvidia-blackwell-thor"), Some(13));
        assert_eq!(gpu_class_id("nvidia-blackwell-rtx"), Some(14));
    }

    #[test]
    fn blackwell_machine_code_families_are_separate_classes() {
        // sm_100a kernels do not run on 12.x and 12.x kernels do not run on 10.x: no class spans both.
        let data_center = nvidia_class(10, 0).unwrap();
        assert_eq!(nvidia_class(10, 3), Some(data_center));
        for (major, minor) in [(10, 1), (11, 0), (12, 0), (12, 1)] {
            assert_ne!(nvidia_class(major, minor), Some(data_center), "{major}.{minor}");
        }
        assert_ne!(nvidia_class(11, 0), nvidia_class(12, 0));
        assert_eq!(nvidia_class(10, 1), nvidia_class(11, 0), "Thor is one class under either driver");
    }

    #[test]
    fn an_unknown_gpu_class_is_an_invalid_argument_listing_every_name() {
        let e = validate_gpu_class("config.gpu_class", "nvidia-pascal").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("`config.gpu_class` names an unknown GPU class \"nvidia-pascal\""), "{e}");
        for class in GPU_CLASSES {
            assert!(e.message().contains(class.name), "{} not listed", class.name);
        }
        assert_eq!(
            validate_gpu_class("config.gpu_class", "NVIDIA-HOPPER").unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
}
