//! GPU discovery: NVIDIA through cudarc, AMD through the HIP runtime, both loaded at run time so that a
//! machine without either driver still runs everything else.
//!
//! - [`classes`]: the GPU class table (compute capability or gfx target to class name and id).
//! - [`nvidia`], [`amd`]: one vendor each; both answer "no devices" rather than fail.

pub mod amd;
pub mod classes;
pub mod nvidia;

use std::sync::OnceLock;

pub use classes::{
    amd_class, amd_target, gpu_class_id, gpu_class_name, nvidia_class, validate_gpu_class, GpuClass, GPU_CLASSES,
};

use crate::types::{GpuDevice, GpuVendor};

/// Every GPU this process can drive, NVIDIA first, then AMD; empty without a driver, never an error or a panic.
///
/// The list is read once per process: both runtimes fix their device set (and its order, under
/// `CUDA_VISIBLE_DEVICES` / `HIP_VISIBLE_DEVICES`) when they initialise, so asking again cannot change it, and
/// initialising a driver costs tens of milliseconds.
pub fn gpu_devices() -> Vec<GpuDevice> {
    static DEVICES: OnceLock<Vec<GpuDevice>> = OnceLock::new();
    DEVICES.get_or_init(discover).clone()
}

fn discover() -> Vec<GpuDevice> {
    let mut devices = nvidia::devices();
    devices.extend(amd::devices());
    devices
}

/// Whether the device reports NVLink multicast support (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED). Only NVIDIA
/// devices have it; anything else, or any driver error, is `false`.
pub fn multicast_supported(device: &GpuDevice) -> bool {
    match device.vendor {
        GpuVendor::Nvidia => nvidia::multicast_supported(device.vendor_ordinal),
        GpuVendor::Amd | GpuVendor::Apple | GpuVendor::Unknown => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_list_nvidia_first_and_never_panic() {
        let devices = gpu_devices();
        let first_amd = devices.iter().position(|d| d.vendor == GpuVendor::Amd).unwrap_or(devices.len());
        assert!(devices[first_amd..].iter().all(|d| d.vendor == GpuVendor::Amd));
        for device in &devices {
            if let Some(class) = &device.gpu_class {
                assert!(gpu_class_id(class).is_some(), "{class} is not in the table");
            }
        }
        assert_eq!(gpu_devices(), devices, "the list is stable within a process");
    }

    #[test]
    fn a_machine_without_drivers_has_no_devices() {
        // Holds on any machine without a CUDA driver or HIP runtime, such as this project's CI.
        if !nvidia::driver_present() && !amd::runtime_present() {
            assert!(gpu_devices().is_empty());
        }
    }

    #[test]
    fn multicast_is_false_without_nvidia() {
        let amd = GpuDevice { vendor: GpuVendor::Amd, ..GpuDevice::default() };
        assert!(!multicast_supported(&amd));
        assert!(!multicast_supported(&GpuDevice::default()));
        if !nvidia::driver_present() {
            let nvidia = GpuDevice { vendor: GpuVendor::Nvidia, ..GpuDevice::default() };
            assert!(!multicast_supported(&nvidia));
        }
    }
}
