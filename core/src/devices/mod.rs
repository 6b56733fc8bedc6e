//! GPU discovery: NVIDIA through cudarc, AMD through the HIP runtime, both loaded at run time so that a
//! machine without either driver still runs everything else.
//!
//! - [`classes`]: the GPU class table (compute capability or gfx target to class name and id).
//! - [`nvidia`], [`amd`]: one vendor each; both answer "no devices" rather than fail, with a note saying why.
//! - [`nvml`], [`fabric`]: what NVML knows without initialising CUDA: compute capabilities, NVLink fabrics.

pub mod amd;
pub mod classes;
pub mod fabric;
pub mod installed;
pub mod nvidia;
pub mod nvml;

use std::sync::OnceLock;

pub use classes::{
    amd_class, amd_target, gpu_class_id, gpu_class_name, nvidia_class, validate_gpu_class, GpuClass, GPU_CLASSES,
};

use crate::types::{GpuDevice, GpuVendor};

/// What discovery found: the devices, the UUID of each (same order; `None` where the driver gave none), and a
/// note for everything that went wrong on the way.
#[derive(Clone, Debug, Default)]
struct Discovery {
    devices: Vec<GpuDevice>,
    uuids: Vec<Option<String>>,
    notes: Vec<String>,
}

/// Read once per process: both runtimes fix their device set (and its order, under `CUDA_VISIBLE_DEVICES` /
/// `HIP_VISIBLE_DEVICES`) when they initialise, so asking again cannot change it, and initialising a driver costs
/// tens of milliseconds.
fn discovery() -> &'static Discovery {
    static DISCOVERY: OnceLock<Discovery> = OnceLock::new();
    DISCOVERY.get_or_init(|| {
        let nvidia = nvidia::discover();
        let (amd, amd_notes) = amd::discover();
        let mut found = Discovery::default();
        for (device, uuid) in nvidia.devices {
            found.devices.push(device);
            found.uuids.push(uuid);
        }
        found.uuids.extend(amd.iter().map(|_| None));
        found.devices.extend(amd);
        found.notes = nvidia.notes.into_iter().chain(amd_notes).collect();
        found
    })
}

/// Every GPU this process can drive, NVIDIA first, then AMD; empty without a driver, never an error or a panic.
/// A device that fails to describe itself is left out and the vendor's others are kept; one whose architecture
/// the class table does not know is listed without a class. Read once per process.
pub fn gpu_devices() -> Vec<GpuDevice> {
    discovery().devices.clone()
}

/// Why this process has no GPU, or `None` when it has one: each vendor's reason, like "no CUDA driver: ..." or
/// "cuInit failed with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): ...", joined with "; ". VRAM executors put it in
/// the message of the unavailable error they raise.
pub fn no_gpu_reason() -> Option<String> {
    let found = discovery();
    found.devices.is_empty().then(|| reason(&found.notes))
}

/// What went wrong during discovery even when some devices were found (a device left out, a vendor's runtime
/// failing), one note each; empty when nothing did.
pub fn discovery_notes() -> Vec<String> {
    discovery().notes.clone()
}

/// The UUID of a listed device, as NVML spells it (`GPU-...`); `None` for a device not listed or one whose
/// driver gave none (AMD).
pub fn gpu_uuid(device: &GpuDevice) -> Option<String> {
    let found = discovery();
    let at =
        found.devices.iter().position(|d| d.vendor == device.vendor && d.vendor_ordinal == device.vendor_ordinal)?;
    found.uuids[at].clone()
}

fn reason(notes: &[String]) -> String {
    if notes.is_empty() {
        "no GPU was found".to_string()
    } else {
        notes.join("; ")
    }
}

/// Whether the device reports NVLink multicast support (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED). Only NVIDIA
/// devices have it; anything else, or any driver error, is `false`. The attribute says yes on unprovisioned
/// nodes too; [`multicast_usable`] asks the driver to really make a multicast object.
pub fn multicast_supported(device: &GpuDevice) -> bool {
    match device.vendor {
        GpuVendor::Nvidia => nvidia::multicast_supported(device.vendor_ordinal),
        GpuVendor::Amd | GpuVendor::Apple | GpuVendor::Unknown => false,
    }
}

/// Whether NVLink multicast really works on the device: the attribute says yes and a multicast object can be
/// created with the device added to it ([`nvidia::multicast_probe`]). Read once per device and process.
pub fn multicast_usable(device: &GpuDevice) -> bool {
    static PROBED: std::sync::Mutex<Vec<(u32, bool)>> = std::sync::Mutex::new(Vec::new());
    if device.vendor != GpuVendor::Nvidia || !multicast_supported(device) {
        return false;
    }
    let mut probed = PROBED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, usable)) = probed.iter().find(|(ordinal, _)| *ordinal == device.vendor_ordinal) {
        return *usable;
    }
    let usable = nvidia::multicast_probe(device.vendor_ordinal).is_ok();
    probed.push((device.vendor_ordinal, usable));
    usable
}

/// The NVLink fabric of a listed device, from NVML by its UUID; `None` for AMD, without NVML, or where the driver
/// has no fabric query.
pub fn gpu_fabric(device: &GpuDevice) -> Option<fabric::Fabric> {
    nvml::fabric_of(&gpu_uuid(device)?)
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
    fn a_machine_without_drivers_has_no_devices_and_says_why() {
        // Holds on any machine without a CUDA driver or HIP runtime, such as this project's CI.
        if !nvidia::driver_present() && !amd::runtime_present() {
            assert!(gpu_devices().is_empty());
            let why = no_gpu_reason().expect("a reason when there is no GPU");
            assert!(why.contains("no CUDA driver") && why.contains("no HIP runtime"), "{why}");
        }
        // Either there are devices, or there is a reason; never both absent.
        assert_eq!(gpu_devices().is_empty(), no_gpu_reason().is_some());
        assert_eq!(discovery().uuids.len(), discovery().devices.len());
    }

    #[test]
    fn the_reason_joins_the_notes() {
        assert_eq!(reason(&[]), "no GPU was found");
        assert_eq!(reason(&["a".into(), "b".into()]), "a; b");
    }

    #[test]
    fn a_device_not_listed_has_no_uuid() {
        let ghost = GpuDevice { vendor: GpuVendor::Nvidia, vendor_ordinal: u32::MAX, ..GpuDevice::default() };
        assert_eq!(gpu_uuid(&ghost), None);
    }

    #[test]
    fn multicast_is_false_without_nvidia() {
        let amd = GpuDevice { vendor: GpuVendor::Amd, ..GpuDevice::default() };
        assert!(!multicast_supported(&amd));
        assert!(!multicast_supported(&GpuDevice::default()));
        assert!(!multicast_usable(&amd));
        if !nvidia::driver_present() {
            let nvidia = GpuDevice { vendor: GpuVendor::Nvidia, ..GpuDevice::default() };
            assert!(!multicast_supported(&nvidia));
            assert!(!multicast_usable(&nvidia));
            assert_eq!(gpu_fabric(&nvidia), None);
        }
    }
}
