//! GPU discovery. (Contract stub: replaced by the devices work.)

use crate::error::{Error, Result};
use crate::types::GpuDevice;

/// Every GPU this process can drive, NVIDIA first, then AMD; empty without a driver, never an error.
pub fn gpu_devices() -> Vec<GpuDevice> {
    Vec::new()
}

/// The spelling of the GPU class with table id `id`, `None` for an id the table does not hold.
pub fn gpu_class_name(id: i32) -> Option<&'static str> {
    let _ = id;
    None
}

/// The table id of a GPU class name, `None` for a name the table does not hold.
pub fn gpu_class_id(name: &str) -> Option<i32> {
    let _ = name;
    None
}

/// Checks that `gpu_class` (the argument named `argument`) is a known GPU class name.
pub fn validate_gpu_class(argument: &str, gpu_class: &str) -> Result<&'static str> {
    Err(Error::invalid_argument(argument, format!("names an unknown GPU class {gpu_class:?}")))
}

/// Whether the device reports NVLink multicast support (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED).
pub fn multicast_supported(device: &GpuDevice) -> bool {
    let _ = device;
    false
}
