//! NVIDIA devices through the CUDA driver API, loaded at run time by cudarc.
//!
//! cudarc panics on its first call when libcuda cannot be loaded, and on a call whose symbol the loaded driver
//! lacks. So every entry here first asks `is_culib_present()`, and runs the driver calls inside
//! `catch_unwind` as a second line of defence: a machine without a usable driver has no NVIDIA devices, it is
//! not an error. What went wrong is kept as a note ([`Discovered::notes`]), with the driver's error name and code
//! (`CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)`), so "no GPUs" has a reason. One device that fails to describe
//! itself is left out with a note of its own; the others are still listed.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUdevice_attribute};

use super::classes::nvidia_class;
use crate::types::{GpuDevice, GpuVendor};

/// What the CUDA driver listed: the devices it could describe, each with its UUID, and a note per failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovered {
    pub devices: Vec<(GpuDevice, Option<String>)>,
    pub notes: Vec<String>,
}

/// Every CUDA device in the driver's order (`CUDA_DEVICE_ORDER` and `CUDA_VISIBLE_DEVICES` apply), with its UUID
/// as NVML spells it (`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`), and a note for every failure.
pub fn discover() -> Discovered {
    if !driver_present() {
        return Discovered {
            notes: vec!["no CUDA driver: libcuda.so could not be loaded".into()],
            ..Default::default()
        };
    }
    let count = match with_driver(result::device::get_count) {
        Ok(count) => count,
        Err(failure) => return Discovered { notes: vec![format!("CUDA driver: {failure}")], ..Default::default() },
    };
    let mut found = Discovered::default();
    for ordinal in 0..count {
        match with_driver(|| describe(ordinal)) {
            Ok(device) => found.devices.push(device),
            Err(failure) => found.notes.push(format!("CUDA device {ordinal} left out: {failure}")),
        }
    }
    if count == 0 {
        found.notes.push("the CUDA driver lists no device (CUDA_VISIBLE_DEVICES may hide them)".into());
    }
    found
}

/// Whether CUDA device `ordinal` reports NVLink multicast support (`CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED`);
/// `false` without a driver or on any error. The attribute alone says yes on unprovisioned nodes too: see
/// [`multicast_probe`].
pub fn multicast_supported(ordinal: u32) -> bool {
    let Ok(ordinal) = i32::try_from(ordinal) else {
        return false;
    };
    with_driver(|| {
        let device = result::device::get(ordinal)?;
        // SAFETY: `device` came from cuDeviceGet.
        let value = unsafe {
            result::device::get_attribute(device, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED)
        }?;
        Ok(value != 0)
    })
    .unwrap_or(false)
}

/// Whether a multicast object can really be made for CUDA device `ordinal`: creates the smallest one
/// (`cuMulticastCreate`), adds the device to it (`cuMulticastAddDevice`, which fails where the fabric is not
/// provisioned although the attribute says yes) and releases it. `Err` names the failing call and the driver's
/// error. Needs no context, so the caller's current context is left alone.
pub fn multicast_probe(ordinal: u32) -> Result<(), String> {
    let ordinal = i32::try_from(ordinal).map_err(|_| format!("no CUDA device {ordinal}"))?;
    with_driver(|| {
        let device = result::device::get(ordinal)?;
        let mut properties = sys::CUmulticastObjectProp {
            numDevices: 1,
            size: 0,
            handleTypes: 0, // CU_MEM_HANDLE_TYPE_NONE: the object never leaves this process.
            flags: 0,
        };
        let mut granularity = 0usize;
        // SAFETY: every pointer is to a live local; the handle made is released before returning.
        unsafe {
            sys::cuMulticastGetGranularity(
                &mut granularity,
                &properties,
                sys::CUmulticastGranularity_flags::CU_MULTICAST_GRANULARITY_MINIMUM,
            )
            .result()?;
            properties.size = granularity.max(1);
            let mut handle: sys::CUmemGenericAllocationHandle = 0;
            sys::cuMulticastCreate(&mut handle, &properties).result()?;
            let added = sys::cuMulticastAddDevice(handle, device).result();
            let released = sys::cuMemRelease(handle).result();
            added.and(released)
        }
    })
}

/// Whether libcuda can be loaded at all; cudarc must not be called otherwise.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library by its candidate names; it calls nothing in it.
    unsafe { sys::is_culib_present() }
}

thread_local! {
    static DRIVER_ENTRIES: Cell<usize> = const { Cell::new(0) };
}

/// How many times the calling thread has entered the CUDA driver here (each entry calls `cuInit` first, when a
/// driver is present). Tests use it to prove that a path, such as `capabilitiesAvailable`, never initialises
/// CUDA: after `cuInit` a forked child can no longer use CUDA. Per thread, so tests running alongside do not
/// count.
pub fn driver_entries() -> usize {
    DRIVER_ENTRIES.with(Cell::get)
}

/// Runs `body` after initialising the driver; `Err` says why not: no driver, a driver error (its name and code),
/// or a panic in cudarc (a symbol the loaded driver lacks).
fn with_driver<T>(body: impl FnOnce() -> Result<T, DriverError>) -> Result<T, String> {
    DRIVER_ENTRIES.with(|entries| entries.set(entries.get() + 1));
    if !driver_present() {
        return Err("no CUDA driver: libcuda.so could not be loaded".into());
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // cuInit is idempotent and cheap after the first call.
        result::init().map_err(|e| ("cuInit", e))?;
        body().map_err(|e| ("a driver call", e))
    }));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err((call, error))) => Err(driver_failure(call, error.0 as u32, &format!("{:?}", error.0))),
        Err(_) => Err("the CUDA driver lacks a function this build calls (driver too old)".into()),
    }
}

/// How a driver failure reads: the call, the driver's error name and its number, and a hint for the codes
/// that say the installation, not this program, is at fault.
pub fn driver_failure(call: &str, code: u32, name: &str) -> String {
    let hint = match code {
        100 => ": no CUDA-capable device is visible",
        803 => ": the user-mode driver (libcuda) and the kernel module differ in version; reboot or reinstall one",
        804 => ": forward compatibility is not supported on this device; use a driver matching the kernel module",
        999 => ": unknown driver error; `nvidia-smi` and the kernel log may say more",
        _ => "",
    };
    format!("{call} failed with {name} ({code}){hint}")
}

fn describe(ordinal: i32) -> Result<(GpuDevice, Option<String>), DriverError> {
    let device = result::device::get(ordinal)?;
    let name = result::device::get_name(device)?;
    // SAFETY: `device` came from cuDeviceGet, as these calls require.
    let (memory, sms, major, minor) = unsafe {
        (
            result::device::total_mem(device)?,
            result::device::get_attribute(device, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            result::device::get_attribute(device, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            result::device::get_attribute(device, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        )
    };
    let uuid = result::device::get_uuid(device).ok().map(|uuid| format_uuid(&uuid.bytes.map(|b| b as u8)));
    let device = GpuDevice {
        vendor: GpuVendor::Nvidia,
        vendor_ordinal: ordinal as u32,
        gpu_class: nvidia_class(major, minor).map(str::to_string),
        compute_units: u32::try_from(sms).unwrap_or(0),
        memory_bytes: memory as u64,
        name,
    };
    Ok((device, uuid))
}

/// A 16-byte UUID as NVML and `nvidia-smi -L` spell it: `GPU-` and 8-4-4-4-12 lowercase hex digits.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("GPU-{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_there_are_no_devices_a_reason_and_no_panic() {
        let found = discover();
        if !driver_present() {
            assert!(found.devices.is_empty());
            assert_eq!(found.notes, vec!["no CUDA driver: libcuda.so could not be loaded".to_string()]);
            assert!(!multicast_supported(0));
            assert!(multicast_probe(0).unwrap_err().contains("no CUDA driver"));
        }
        for (device, uuid) in &found.devices {
            assert_eq!(device.vendor, GpuVendor::Nvidia);
            assert!(device.memory_bytes > 0 && device.compute_units > 0 && !device.name.is_empty());
            assert!(uuid.as_deref().is_none_or(|u| u.starts_with("GPU-") && u.len() == 40), "{uuid:?}");
        }
        assert!(!multicast_supported(u32::MAX));
        assert!(multicast_probe(u32::MAX).is_err());
    }

    #[test]
    fn driver_failures_carry_the_name_the_code_and_a_hint() {
        let note = driver_failure("cuInit", 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
        assert!(note.starts_with("cuInit failed with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): "), "{note}");
        assert!(note.contains("kernel module"), "{note}");
        let note = driver_failure("cuInit", 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
        assert!(note.contains("(804)") && note.contains("forward compatibility"), "{note}");
        assert_eq!(
            driver_failure("a driver call", 2, "CUDA_ERROR_OUT_OF_MEMORY"),
            "a driver call failed with CUDA_ERROR_OUT_OF_MEMORY (2)"
        );
    }

    #[test]
    fn the_error_name_comes_from_the_driver_enum() {
        let error = DriverError(sys::CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
        assert_eq!(format!("{:?}", error.0), "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
        assert_eq!(error.0 as u32, 803);
    }

    #[test]
    fn uuids_are_spelled_as_nvml_spells_them() {
        let bytes: [u8; 16] = std::array::from_fn(|i| (i * 17) as u8);
        assert_eq!(format_uuid(&bytes), "GPU-00112233-4455-6677-8899-aabbccddeeff");
    }

    #[test]
    fn every_entry_is_counted() {
        let before = driver_entries();
        let _ = multicast_supported(0);
        assert!(driver_entries() > before);
    }
}
