//! The device side of a VRAM executor: one CUDA stream per device, created on the device's primary context, or
//! borrowed stream addresses.
//!
//! Nothing here leaves a trace on the calling thread's CUDA state: every place that makes a context current
//! ([`Bound`]) puts the caller's previous context back when it is done, so a PyTorch thread working on device 1
//! stays on device 1 across `forVram`, `free` and `Model.loadVram`.

use super::vram_rules;
use crate::error::{Error, Result};
use crate::path::name;
use crate::types::{ExecutorForVramConfig, GpuDevice, GpuVendor};
use cudarc::driver::{result as cu, sys, DriverError};
use std::sync::Mutex;

/// A retained primary context of one device, released on drop (which makes no context current).
pub(crate) struct Primary {
    device: sys::CUdevice,
    context: sys::CUcontext,
}

// SAFETY: a CUcontext handle may be used from any thread; the retain count is the driver's.
unsafe impl Send for Primary {}
// SAFETY: as above; `Primary` has no interior mutability.
unsafe impl Sync for Primary {}

impl Primary {
    /// Retains the primary context of CUDA device `cuda_ordinal` (initialising the driver first).
    pub fn retain(cuda_ordinal: u32) -> std::result::Result<Primary, DriverError> {
        cu::init()?;
        let device = cu::device::get(cuda_ordinal as i32)?;
        // SAFETY: `device` comes from `cuDeviceGet`; the retain is paired with the release in `drop`.
        let context = unsafe { cu::primary_ctx::retain(device) }?;
        Ok(Primary { device, context })
    }

    pub fn context(&self) -> sys::CUcontext {
        self.context
    }
}

impl Drop for Primary {
    fn drop(&mut self) {
        // SAFETY: paired with the retain in `Primary::retain`.
        let _ = unsafe { cu::primary_ctx::release(self.device) };
    }
}

/// A context made current on this thread until drop, which makes the caller's previous context (or none) current
/// again. Not `Send`: it restores the thread it was made on.
pub(crate) struct Bound {
    previous: sys::CUcontext,
}

impl Bound {
    pub fn bind(primary: &Primary) -> std::result::Result<Bound, DriverError> {
        let previous = cu::ctx::get_current()?.unwrap_or(std::ptr::null_mut());
        // SAFETY: the context is retained by `primary`, which outlives this binding at every call site.
        unsafe { cu::ctx::set_current(primary.context) }?;
        Ok(Bound { previous })
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        // SAFETY: the caller's own context (or null, which unbinds), read by `bind` on this thread.
        let _ = unsafe { cu::ctx::set_current(self.previous) };
    }
}

/// A retained context and the stream this executor created on it (`None` for a borrowed stream).
struct Owned {
    primary: Primary,
    stream: Option<u64>,
}

impl Drop for Owned {
    fn drop(&mut self) {
        if let Some(stream) = self.stream {
            if let Ok(_bound) = Bound::bind(&self.primary) {
                // SAFETY: created by `open` on this context and destroyed once.
                let _ = unsafe { cu::stream::destroy(stream as sys::CUstream) };
            }
        }
    }
}

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

    /// Waits for everything queued so far on the executor's streams (its own and borrowed ones).
    pub fn synchronize(&self) -> Result<()> {
        for (i, &stream) in self.streams.iter().enumerate() {
            // SAFETY: the stream lives while the executor is not freed (the caller checked), and
            // cuStreamSynchronize needs no current context.
            unsafe { cu::stream::synchronize(stream as sys::CUstream) }
                .map_err(|e| Error::device(format!("`drain` waiting for the stream of device {i} failed: {e:?}")))?;
        }
        Ok(())
    }
}

/// The checks that need no device: an empty or repeated device list, a stream count that differs from the
/// device count, special or repeated stream addresses, an unknown GPU class.
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
        vram_rules::check_stream_addresses(streams)?;
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
        let why = crate::devices::no_gpu_reason().unwrap_or_else(|| "no GPU was found".into());
        return Err(Error::unavailable(format!(
            "{} found no GPU: {} lists none ({why})",
            name("for_vram"),
            name("gpu_devices()")
        )));
    }
    let ordinals = match &config.devices {
        Some(list) => list.clone(),
        None => vec![vram_rules::default_ordinal(|v| std::env::var(v).ok(), listed.len())?],
    };
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
    let chosen: Vec<(u32, &GpuDevice)> = ordinals.iter().copied().zip(&devices).collect();
    vram_rules::check_class(config.gpu_class.as_deref(), &chosen)?;
    vram_rules::check_scratch_limit(config.scratch_limit, &chosen)?;
    for (ordinal, device) in &chosen {
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
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::unavailable(format!("{} cannot load the CUDA driver library (libcuda)", name("for_vram"))));
    }
    let mut owned = Vec::with_capacity(devices.len());
    let mut streams = Vec::with_capacity(devices.len());
    for (i, device) in devices.iter().enumerate() {
        let ordinal = ordinals[i];
        let fail = |what: &str, e: DriverError| Error::device(format!("{what} on device {ordinal} failed: {e:?}"));
        let primary = Primary::retain(device.vendor_ordinal).map_err(|e| fail("retaining the primary context", e))?;
        match config.streams.as_ref().map(|s| s[i]) {
            Some(address) => {
                let mut context = std::ptr::null_mut();
                // SAFETY: the address passed the shape checks (not a special handle); the driver reads the stream.
                unsafe { sys::cuStreamGetCtx(address as sys::CUstream, &mut context) }
                    .result()
                    .map_err(|e| fail(&format!("reading the context of borrowed stream {address:#x}"), e))?;
                if context != primary.context() {
                    return Err(Error::invalid_argument(
                        "streams",
                        format!(
                            "holds {address:#x} for device {ordinal}, a stream of another context: borrow a stream \
                             of the device's primary context"
                        ),
                    ));
                }
                streams.push(address);
                owned.push(Owned { primary, stream: None });
            }
            None => {
                // A raw non-blocking stream rather than cudarc's `CudaContext::new_stream`: cudarc synchronises the
                // whole context before its first stream on a context (its event tracking), which would wait on
                // every other library's work on the device at each `forVram`. The binding restores the caller's
                // context when it drops.
                let bound = Bound::bind(&primary).map_err(|e| fail("binding the primary context", e))?;
                let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking)
                    .map_err(|e| fail("creating a stream", e))?;
                drop(bound);
                streams.push(stream as u64);
                owned.push(Owned { primary, stream: Some(stream as u64) });
            }
        }
    }
    Ok(Gpu { devices, streams, scratch_limit: config.scratch_limit, owned: Mutex::new(owned) })
}
