//! CPU classes and the capability strings.
//!
//! Both strings list class names comma-separated, without spaces, in exactly the spelling that `cpuClass`
//! ([`validate_cpu_class`]) and `gpuClass` ([`crate::devices::validate_gpu_class`]) accept: whatever one
//! lists, the other accepts. The CPU classes come first, in table order, then the GPU classes.

mod cpu_classes;

pub use cpu_classes::{
    compiled_cpu_classes, cpu_class, feature_detected, missing_features, native_cpu_class, CpuArch, CpuClass,
    CPU_CLASSES,
};

use crate::devices::{installed::installed_gpu_classes, GPU_CLASSES};
use crate::error::{Error, Result};

/// The CPU classes this build can dispatch to (those of its target architecture, `portable` first) and every
/// GPU class the tables know, comma-separated.
/// Computed once per process: neither the build nor the machine changes while it runs, and bindings call this on
/// hot paths (the overhead benchmarks).
pub fn capabilities_compiled() -> String {
    static COMPILED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    COMPILED
        .get_or_init(|| {
            let cpu = compiled_cpu_classes().map(|class| class.name);
            let gpu = GPU_CLASSES.iter().map(|class| class.name);
            join_unique(cpu.chain(gpu))
        })
        .clone()
}

/// The CPU classes this machine satisfies and the classes of the GPUs installed, comma-separated. A GPU whose
/// class the tables do not know adds nothing.
///
/// It never initialises a GPU runtime (no `cuInit`, no `hipInit`), so a process may call it and then fork
/// workers that use the GPU: GPUs are read from NVML and the kernel's KFD topology
/// ([`crate::devices::installed`]), which list every installed GPU whatever `CUDA_VISIBLE_DEVICES` or
/// `HIP_VISIBLE_DEVICES` hide. Computed once per process.
pub fn capabilities_available() -> String {
    static AVAILABLE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    AVAILABLE.get_or_init(compute_available).clone()
}

fn compute_available() -> String {
    let cpu = runnable_cpu_classes();
    join_unique(cpu.into_iter().chain(installed_gpu_classes()))
}

/// The CPU classes this machine satisfies, in table order; `portable` at the least.
pub fn runnable_cpu_classes() -> Vec<&'static str> {
    compiled_cpu_classes().filter(|class| missing_features(class).is_empty()).map(|class| class.name).collect()
}

/// Checks that `cpu_class` (the argument named `argument`) is a known class this CPU can run, and returns the
/// table's spelling of it. Unknown: invalid argument listing the accepted names. Known but not runnable here
/// (another architecture, or features this CPU lacks): unsupported, naming the missing features.
pub fn validate_cpu_class(argument: &str, cpu_class: &str) -> Result<&'static str> {
    let Some(class) = cpu_classes::cpu_class(cpu_class) else {
        let known: Vec<&str> = CPU_CLASSES.iter().map(|class| class.name).collect();
        return Err(Error::invalid_argument(
            argument,
            format!(
                "names an unknown CPU class {cpu_class:?}; known classes: {}; this machine runs: {}",
                known.join(", "),
                runnable_cpu_classes().join(", ")
            ),
        ));
    };
    if !class.arch.matches_target() {
        return Err(Error::unsupported(format!(
            "{} names the CPU class {:?}, which is for {} CPUs, and this build runs on {}; this machine runs: {}",
            crate::path::name(argument),
            class.name,
            class.arch.as_str(),
            std::env::consts::ARCH,
            runnable_cpu_classes().join(", ")
        )));
    }
    let missing = missing_features(class);
    if !missing.is_empty() {
        return Err(Error::unsupported(format!(
            "{} names the CPU class {:?}, and this CPU lacks {}; this machine runs: {}",
            crate::path::name(argument),
            class.name,
            missing.join(", "),
            runnable_cpu_classes().join(", ")
        )));
    }
    Ok(class.name)
}

/// Joins names with commas, keeping the first of each repeated name.
fn join_unique<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for name in names {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::validate_gpu_class;
    use crate::error::ErrorKind;

    fn well_formed(list: &str) {
        assert!(!list.is_empty());
        assert!(!list.contains(' ') && !list.starts_with(',') && !list.ends_with(',') && !list.contains(",,"));
        let names: Vec<&str> = list.split(',').collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "repeated name in {list}");
    }

    fn is_gpu_class(name: &str) -> bool {
        GPU_CLASSES.iter().any(|class| class.name == name)
    }

    #[test]
    fn compiled_lists_the_target_cpu_classes_then_every_gpu_class() {
        let compiled = capabilities_compiled();
        well_formed(&compiled);
        assert!(compiled.starts_with("portable,"));
        for class in GPU_CLASSES {
            assert!(compiled.split(',').any(|name| name == class.name), "{} missing", class.name);
        }
        for class in CPU_CLASSES {
            assert_eq!(
                compiled.split(',').any(|name| name == class.name),
                class.arch.matches_target(),
                "{}",
                class.name
            );
        }
    }

    #[test]
    fn every_name_listed_is_accepted_by_its_validator() {
        for name in capabilities_compiled().split(',') {
            if is_gpu_class(name) {
                assert_eq!(
                    validate_gpu_class("config.gpu_class", name),
                    Ok(GPU_CLASSES.iter().find(|c| c.name == name).unwrap().name)
                );
            } else {
                // Compiled but maybe not runnable here: known either way, so never an invalid argument.
                if let Err(e) = validate_cpu_class("config.cpu_class", name) {
                    assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}");
                }
            }
        }
        let available = capabilities_available();
        well_formed(&available);
        for name in available.split(',') {
            if is_gpu_class(name) {
                assert!(validate_gpu_class("config.gpu_class", name).is_ok());
            } else {
                assert_eq!(validate_cpu_class("config.cpu_class", name), Ok(cpu_class(name).unwrap().name));
            }
        }
    }

    #[test]
    fn available_starts_with_the_runnable_cpu_classes_up_to_the_native_one() {
        let available = capabilities_available();
        assert!(available.starts_with("portable"));
        assert!(available.split(',').any(|name| name == native_cpu_class()));
        assert_eq!(runnable_cpu_classes().last().copied(), Some(native_cpu_class()));
    }

    #[test]
    fn an_unknown_cpu_class_is_an_invalid_argument_listing_every_name() {
        let e = validate_cpu_class("config.cpu_class", "intel-pentium-pro").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("`config.cpu_class` names an unknown CPU class \"intel-pentium-pro\""), "{e}");
        for class in CPU_CLASSES {
            assert!(e.message().contains(class.name), "{} not listed in {e}", class.name);
        }
        // Names are matched exactly: no case folding, no trimming.
        for near_miss in ["Intel-Haswell", " portable", "portable ", ""] {
            assert_eq!(
                validate_cpu_class("config.cpu_class", near_miss).unwrap_err().kind(),
                ErrorKind::InvalidArgument
            );
        }
    }

    #[test]
    fn a_class_of_another_architecture_is_unsupported_and_says_why() {
        let (foreign, arch) =
            if cfg!(target_arch = "aarch64") { ("intel-haswell", "x86_64") } else { ("arm-sve2", "aarch64") };
        let e = validate_cpu_class("config.cpu_class", foreign).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(
            e.message().contains(foreign) && e.message().contains(arch) && e.message().contains("`config.cpu_class`"),
            "{e}"
        );
    }

    #[test]
    fn a_class_this_cpu_cannot_run_names_the_missing_features() {
        let Some(class) = compiled_cpu_classes().find(|class| !missing_features(class).is_empty()) else {
            return; // this CPU runs every class of its architecture
        };
        let e = validate_cpu_class("config.cpu_class", class.name).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(e.message().contains(class.name));
        for feature in missing_features(class) {
            assert!(e.message().contains(feature), "{feature} not named in {e}");
        }
    }

    #[test]
    fn available_never_initialises_cuda() {
        let before = crate::devices::nvidia::driver_entries();
        let fresh = compute_available();
        assert_eq!(crate::devices::nvidia::driver_entries(), before, "capabilitiesAvailable entered the CUDA driver");
        assert_eq!(fresh, capabilities_available());
    }

    #[test]
    fn join_unique_keeps_the_first_of_each_name() {
        assert_eq!(join_unique(["a", "b", "a", "c", "b"].into_iter()), "a,b,c");
    }
}
