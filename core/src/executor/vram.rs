//! The device side of a VRAM executor: one CUDA stream per device through cudarc, or borrowed stream addresses.

use crate::error::{Error, Result};
use crate::path::name;
use crate::types::{ExecutorForVramConfig, GpuDevice, GpuVendor};
use cudarc::driver::{CudaContext, CudaStream};
use std::sync::{Arc, Mutex};

/// A context this executor retained and the stream it created on it, if any.
type Owned = (Arc<CudaContext>, Option<Arc<CudaStream>>);

/// What a VRAM executor holds on its devices; empty for a RAM executor.
#[derive(Default)]
pub(crate) struct Gpu {
    pub devices: Vec<GpuDevice>,
    /// `CUstream` addresses, one per device.
    pub streams: Vec<u64>,
    pub scratch_limit: Option<u64>,
    /// The contexts and the streams this executor created (none for borrowed streams), released on free.
    owned: Mutex<Vec<Owned>>,
}

impl Gpu {
    pub fn release(&self) {
        self.owned.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// The checks that need no device: an empty or repeated device list, a stream count that differs from the
/// device count, an unknown GPU class.
pub(crate) fn check_shape(config: &ExecutorForVramConfig) -> Result<()> {
    if let Some(devices) = &config.devices {
        if devices.is_empty() {
            return Err(Error::invalid_argument(
                "config.devices",
                "must name at least one device ordinal, got an empty list",
            ));
        }
        for (i, d) in devices.iter().enumerate() {
            if devices[..i].contains(d) {
                return Err(Error::invalid_argument("config.devices", format!("names device ordinal {d} twice")));
            }
        }
    }
    if let Some(streams) = &config.streams {
        let (count, what) = match &config.devices {
            Some(d) => (d.len(), format!("{} device{}", d.len(), if d.len() == 1 { "" } else { "s" })),
            None => (1, format!("1 device ({} is absent, which takes one)", name("config.devices"))),
        };
        if streams.len() != count {
            return Err(Error::invalid_argument(
                "config.streams",
                format!(
                    "must hold one stream per device: got {} stream{} for {what}",
                    streams.len(),
                    if streams.len() == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    if let Some(class) = &config.gpu_class {
        crate::devices::validate_gpu_class("config.gpu_class", class)?;
    }
    Ok(())
}

/// Resolves the devices and opens (or adopts) one stream per device.
pub(crate) fn open(config: &ExecutorForVramConfig) -> Result<Gpu> {
    let listed = crate::devices::gpu_devices();
    if listed.is_empty() {
        return Err(Error::unavailable(format!(
            "{} found no GPU: {} lists none",
            name("for_vram"),
            name("gpu_devices()")
        )));
    }
    let ordinals = config.devices.clone().unwrap_or_else(|| vec![0]);
    let mut devices = Vec::with_capacity(ordinals.len());
    for &ordinal in &ordinals {
        match listed.get(ordinal as usize) {
            Some(d) => devices.push(d.clone()),
            None => {
                return Err(Error::invalid_argument(
                    "config.devices",
                    format!(
                        "names device ordinal {ordinal}, but {} lists {} device{}",
                        name("gpu_devices()"),
                        listed.len(),
                        if listed.len() == 1 { "" } else { "s" }
                    ),
                ))
            }
        }
    }
    for (ordinal, device) in ordinals.iter().zip(&devices) {
        if device.vendor != GpuVendor::Nvidia {
            return Err(Error::unsupported(format!(
                "{} cannot drive device {ordinal} ({}, {:?}): only NVIDIA devices have streams for now",
                name("for_vram"),
                device.name,
                device.vendor
            )));
        }
    }
    // SAFETY: only probes whether the driver library loads.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::unavailable(format!("{} cannot load the CUDA driver library (libcuda)", name("for_vram"))));
    }
    let mut owned = Vec::with_capacity(devices.len());
    let mut streams = Vec::with_capacity(devices.len());
    for (i, device) in devices.iter().enumerate() {
        let context = CudaContext::new(device.vendor_ordinal as usize)
            .map_err(|e| Error::device(format!("creating a CUDA context on device {} failed: {e:?}", ordinals[i])))?;
        match config.streams.as_ref().map(|s| s[i]) {
            Some(address) => {
                streams.push(address);
                owned.push((context, None));
            }
            None => {
                let stream = context.new_stream().map_err(|e| {
                    Error::device(format!("creating a CUDA stream on device {} failed: {e:?}", ordinals[i]))
                })?;
                streams.push(stream.cu_stream() as u64);
                owned.push((context, Some(stream)));
            }
        }
    }
    Ok(Gpu { devices, streams, scratch_limit: config.scratch_limit, owned: Mutex::new(owned) })
}
