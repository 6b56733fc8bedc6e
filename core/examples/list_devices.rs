//! Prints what uform-core sees: the capability strings, the CPU's own class, and one tab-separated line per GPU.
//! `scripts/gpu-check.sh` parses this output, so the line formats are part of that script's contract:
//!
//! ```text
//! compiled<TAB>portable,intel-haswell,...
//! available<TAB>portable,...,nvidia-hopper
//! cpu<TAB>amd-genoa
//! gpu<TAB>vendor<TAB>ordinal<TAB>class or -<TAB>compute units<TAB>memory bytes<TAB>multicast 0/1<TAB>name
//! ```

use uform_core::capabilities::{capabilities_available, capabilities_compiled, native_cpu_class};
use uform_core::devices::{gpu_devices, multicast_supported};

fn main() {
    println!("compiled\t{}", capabilities_compiled());
    println!("available\t{}", capabilities_available());
    println!("cpu\t{}", native_cpu_class());
    for device in gpu_devices() {
        println!(
            "gpu\t{:?}\t{}\t{}\t{}\t{}\t{}\t{}",
            device.vendor,
            device.vendor_ordinal,
            device.gpu_class.as_deref().unwrap_or("-"),
            device.compute_units,
            device.memory_bytes,
            u8::from(multicast_supported(&device)),
            device.name
        );
    }
}
