//! NVIDIA devices through the CUDA driver API, loaded at run time by cudarc.
//!
//! cudarc panics on its first call when libcuda cannot be loaded, and on a call whose symbol the loaded driver
//! lacks. So every entry here first asks `is_culib_present()`, and runs the driver calls inside
//! `catch_unwind` as a second line of defence: a machine without a usable driver has no NVIDIA devices, it is
//! not an error. Driver errors (no device, a driver older than the kernel module) likewise mean "none".

use std::panic::{catch_unwind, AssertUnwindSafe};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUdevice_attribute};

use super::classes::nvidia_class;
use crate::types::{GpuDevice, GpuVendor};

/// Every CUDA device in the driver's order (`CUDA_DEVICE_ORDER` and `CUDA_VISIBLE_DEVICES` apply); empty when
/// there is no driver, no device, or the driver fails part way.
pub fn devices() -> Vec<GpuDevice> {
    with_driver(|| {
        let count = result::device::get_count()?;
        (0..count).map(describe).collect::<Result<Vec<_>, DriverError>>()
    })
    .unwrap_or_default()
}

/// Whether CUDA device `ordinal` supports NVLink multicast objects; `false` without a driver or on any error.
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

/// Whether libcuda can be loaded at all; cudarc must not be called otherwise.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library by its candidate names; it calls nothing in it.
    unsafe { sys::is_culib_present() }
}

/// Runs `body` after initialising the driver; `None` without a driver, on a driver error, or on a panic.
fn with_driver<T>(body: impl FnOnce() -> Result<T, DriverError>) -> Option<T> {
    if !driver_present() {
        return None;
    }
    catch_unwind(AssertUnwindSafe(|| {
        // cuInit is idempotent and cheap after the first call.
        result::init()?;
        body()
    }))
    .ok()?
    .ok()
}

fn describe(ordinal: i32) -> Result<GpuDevice, DriverError> {
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
    Ok(GpuDevice {
        vendor: GpuVendor::Nvidia,
        vendor_ordinal: ordinal as u32,
        gpu_class: nvidia_class(major, minor).map(str::to_string),
        compute_units: u32::try_from(sms).unwrap_or(0),
        memory_bytes: memory as u64,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_there_are_no_devices_and_no_panic() {
        let devices = devices();
        if !driver_present() {
            assert!(devices.is_empty());
            assert!(!multicast_supported(0));
        }
        for (i, device) in devices.iter().enumerate() {
            assert_eq!(device.vendor, GpuVendor::Nvidia);
            assert_eq!(device.vendor_ordinal, i as u32);
            assert!(device.memory_bytes > 0 && device.compute_units > 0 && !device.name.is_empty());
        }
        assert!(!multicast_supported(u32::MAX));
    }
}
