//! The classes of the GPUs installed, read without initialising any GPU runtime, for `capabilitiesAvailable`.
//!
//! `cuInit` (and `hipInit`) in a process that later forks leaves children that cannot use the GPU, so this path
//! never enters either runtime: NVIDIA compute capabilities come from NVML ([`super::nvml`]), AMD gfx targets from
//! the kernel's KFD topology (`/sys/class/kfd/kfd/topology/nodes/*/properties`, `gfx_target_version`). Both list
//! every installed GPU: `CUDA_VISIBLE_DEVICES` and `HIP_VISIBLE_DEVICES` do not apply.

use std::path::Path;

use super::classes::{amd_class, nvidia_class};
use super::nvml;

/// Where the kernel lists KFD topology nodes (one per CPU socket and per AMD GPU).
pub const KFD_NODES: &str = "/sys/class/kfd/kfd/topology/nodes";

/// The class of every installed GPU the tables know, NVIDIA first, repeats kept; an unknown architecture adds
/// nothing.
pub fn installed_gpu_classes() -> Vec<&'static str> {
    let nvidia = nvml::compute_capabilities().into_iter().filter_map(|(major, minor)| nvidia_class(major, minor));
    let amd = kfd_gfx_targets(Path::new(KFD_NODES)).into_iter().filter_map(|target| amd_class(&target));
    nvidia.chain(amd).collect()
}

/// The gfx targets of the GPU nodes under a KFD topology directory, in node order; empty when it is absent.
pub fn kfd_gfx_targets(nodes: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(nodes) else {
        return Vec::new();
    };
    let mut numbered: Vec<(u32, String)> = entries
        .flatten()
        .filter_map(|entry| {
            let node: u32 = entry.file_name().to_str()?.parse().ok()?;
            let properties = std::fs::read_to_string(entry.path().join("properties")).ok()?;
            Some((node, gfx_target_of(&properties)?))
        })
        .collect();
    numbered.sort();
    numbered.into_iter().map(|(_, target)| target).collect()
}

/// The gfx target a node's `properties` file names by its `gfx_target_version` line; `None` for a CPU node
/// (version 0) or a file without the line.
pub fn gfx_target_of(properties: &str) -> Option<String> {
    let version = properties.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some("gfx_target_version")).then(|| words.next()?.parse::<u32>().ok()).flatten()
    })?;
    gfx_target(version)
}

/// The gfx target of a KFD `gfx_target_version` (major * 10000 + minor * 100 + stepping, in decimal): the
/// stepping is spelled in hex, so 90010 is gfx90a and 90402 is gfx942. `None` for 0 (a CPU node).
pub fn gfx_target(version: u32) -> Option<String> {
    if version == 0 {
        return None;
    }
    let (major, minor, stepping) = (version / 10000, version / 100 % 100, version % 100);
    (minor < 16 && stepping < 16).then(|| format!("gfx{major}{minor:x}{stepping:x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kfd_versions_spell_gfx_targets() {
        for (version, target) in [
            (90402, "gfx942"),
            (90010, "gfx90a"),
            (90008, "gfx908"),
            (90500, "gfx950"),
            (100300, "gfx1030"),
            (110000, "gfx1100"),
            (120001, "gfx1201"),
        ] {
            assert_eq!(gfx_target(version).as_deref(), Some(target), "{version}");
        }
        assert_eq!(gfx_target(0), None);
        assert_eq!(gfx_target(91700), None);
    }

    #[test]
    fn a_topology_directory_lists_its_gpu_nodes_in_order() {
        let dir = std::env::temp_dir().join(format!("uform-kfd-{}", std::process::id()));
        let node = |n: &str, text: &str| {
            std::fs::create_dir_all(dir.join(n)).unwrap();
            std::fs::write(dir.join(n).join("properties"), text).unwrap();
        };
        node("0", "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n");
        node("2", "simd_count 416\ngfx_target_version 110000\nvendor_id 4098\n");
        node("1", "simd_count 1216\ngfx_target_version 90402\n");
        node("x", "gfx_target_version 90010\n");
        node("3", "simd_count 4\n");
        assert_eq!(kfd_gfx_targets(&dir), vec!["gfx942".to_string(), "gfx1100".to_string()]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(kfd_gfx_targets(&dir).is_empty());
    }

    #[test]
    fn listing_installed_classes_never_enters_the_cuda_driver() {
        let before = super::super::nvidia::driver_entries();
        let classes = installed_gpu_classes();
        assert_eq!(super::super::nvidia::driver_entries(), before, "installed_gpu_classes entered the CUDA driver");
        assert!(classes.iter().all(|class| super::super::gpu_class_id(class).is_some()));
    }
}
