//! VRAM residency: every tensor copied to each listed device through cudarc, on the executor's stream for that
//! device, into one device buffer per shard (tensors keep their offsets within it).

use super::source::Source;
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::executor::{Bound, Primary};
use crate::path::name;
use crate::types::GpuDevice;
use cudarc::driver::{result as cu, sys};

/// Which of the executor's devices receive the weights, as positions in its device order. The checks need no GPU:
/// `driver` says whether a driver and a GPU are present, `executor_ordinals` the executor's devices as
/// `gpuDevices()` ordinals (empty for a RAM executor).
pub(crate) fn plan_devices(driver: bool, executor_ordinals: &[u32], requested: Option<&[u32]>) -> Result<Vec<usize>> {
    if !driver {
        return Err(Error::unavailable(format!(
            "no GPU driver: {} needs a VRAM executor (from {}), and this machine has no GPU a driver can reach; load \
             the model into RAM with {} instead",
            name("Model.load_vram"),
            name("Executor.for_vram"),
            name("Model.load_ram")
        )));
    }
    if executor_ordinals.is_empty() {
        return Err(Error::invalid_argument(
            "config.executor",
            format!(
                "is a RAM executor, which drives no GPU: {} needs a VRAM executor from {} (or load into RAM with {})",
                name("Model.load_vram"),
                name("Executor.for_vram"),
                name("Model.load_ram")
            ),
        ));
    }
    let drives = || executor_ordinals.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    match requested {
        None => Ok((0..executor_ordinals.len()).collect()),
        Some([]) => {
            Err(Error::invalid_argument("config.devices", "must name at least one device ordinal, got an empty list"))
        }
        Some(list) => list
            .iter()
            .enumerate()
            .map(|(i, ordinal)| {
                if list[..i].contains(ordinal) {
                    return Err(Error::invalid_argument(
                        "config.devices",
                        format!("names device ordinal {ordinal} twice"),
                    ));
                }
                executor_ordinals.iter().position(|o| o == ordinal).ok_or_else(|| {
                    Error::invalid_argument(
                        "config.devices",
                        format!(
                            "names device ordinal {ordinal}, which the executor does not drive (it drives {})",
                            drives()
                        ),
                    )
                })
            })
            .collect(),
    }
}

/// Whether a CUDA driver loads and lists a GPU.
pub(crate) fn driver_present() -> bool {
    // SAFETY: only probes whether the driver library loads.
    !crate::devices::gpu_devices().is_empty() && unsafe { sys::is_culib_present() }
}

/// The `gpuDevices()` ordinals of an executor's devices.
pub(crate) fn executor_ordinals(devices: &[GpuDevice]) -> Vec<u32> {
    let listed = crate::devices::gpu_devices();
    devices
        .iter()
        .filter_map(|d| {
            listed.iter().position(|l| l.vendor == d.vendor && l.vendor_ordinal == d.vendor_ordinal).map(|p| p as u32)
        })
        .collect()
}

/// One device's copy: a buffer per shard.
struct Replica {
    ordinal: u32,
    primary: Primary,
    buffers: Vec<(sys::CUdeviceptr, usize)>,
}

impl Drop for Replica {
    fn drop(&mut self) {
        // The caller's current context comes back when `_bound` drops; the primary context is released after.
        if let Ok(_bound) = Bound::bind(&self.primary) {
            for &(ptr, len) in &self.buffers {
                if len > 0 {
                    // SAFETY: allocated by `upload` in this context and freed once.
                    let _ = unsafe { cu::free_sync(ptr) };
                }
            }
        }
    }
}

/// Where each tensor sits in the device buffers.
struct Place {
    name: String,
    shard: usize,
    begin: usize,
    len: usize,
}

/// Weights uploaded to one or more devices.
pub struct VramWeights {
    replicas: Vec<Replica>,
    places: Vec<Place>,
}

impl std::fmt::Debug for VramWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VramWeights")
            .field("devices", &self.replicas.len())
            .field("tensors", &self.places.len())
            .finish()
    }
}

impl VramWeights {
    /// Uploads every tensor of `source` to the executor's devices at `positions` (see [`plan_devices`]).
    pub fn upload(source: &Source, executor: &Executor, positions: &[usize], ordinals: &[u32]) -> Result<VramWeights> {
        let devices = executor.devices()?;
        let streams = executor.stream_addresses();
        let mut places = Vec::new();
        for (s, shard) in source.shards.iter().enumerate() {
            for t in &shard.tensors {
                places.push(Place {
                    name: t.name.clone(),
                    shard: s,
                    begin: t.begin as usize,
                    len: (t.end - t.begin) as usize,
                });
            }
        }
        let mut replicas = Vec::with_capacity(positions.len());
        for &p in positions {
            let ordinal = ordinals[p];
            let fail = |what: &str, e: &dyn std::fmt::Debug| {
                Error::device(format!("{} {what} on device {ordinal} failed: {e:?}", name("Model.load_vram")))
            };
            let primary =
                Primary::retain(devices[p].vendor_ordinal).map_err(|e| fail("retaining the primary context", &e))?;
            // Declared before the replica, so a failure frees its buffers (binding again) before this restores
            // the caller's context.
            let bound = Bound::bind(&primary).map_err(|e| fail("binding the context", &e))?;
            let stream = streams[p] as sys::CUstream;
            let mut replica = Replica { ordinal, primary, buffers: Vec::with_capacity(source.shards.len()) };
            for shard in &source.shards {
                let len = shard.map.len() - shard.data_start;
                let ptr = if len == 0 {
                    0
                } else {
                    // SAFETY: the context is current; the size is the shard's data section.
                    unsafe { cu::malloc_sync(len) }
                        .map_err(|e| fail(&format!("allocating {len} bytes for {}", shard.path.display()), &e))?
                };
                replica.buffers.push((ptr, len));
            }
            for place in &places {
                if place.len == 0 {
                    continue;
                }
                let shard = &source.shards[place.shard];
                let from = shard.data_start + place.begin;
                let (base, _) = replica.buffers[place.shard];
                // SAFETY: the destination lies inside the shard's buffer (the header was checked to tile the data), the
                // source inside the mapping, which outlives the stream synchronisation below.
                unsafe { cu::memcpy_htod_async(base + place.begin as u64, &shard.map[from..from + place.len], stream) }
                    .map_err(|e| fail(&format!("copying tensor `{}`", place.name), &e))?;
            }
            // SAFETY: the executor's stream lives as long as the executor, which the model borrows.
            unsafe { cu::stream::synchronize(stream) }.map_err(|e| fail("waiting for the copies", &e))?;
            replicas.push(replica);
            drop(bound);
        }
        Ok(VramWeights { replicas, places })
    }

    /// The device address and byte length of tensor `name` on device `ordinal`, `None` when either is unknown.
    pub fn tensor(&self, ordinal: u32, name: &str) -> Option<(u64, usize)> {
        let replica = self.replicas.iter().find(|r| r.ordinal == ordinal)?;
        let place = self.places.iter().find(|p| p.name == name)?;
        Some((replica.buffers[place.shard].0 + place.begin as u64, place.len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn device_checks_need_no_gpu() {
        let e = plan_devices(false, &[], None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(e.message().starts_with("no GPU driver: `Model.load_vram` needs a VRAM executor"), "{e}");
        let e = plan_devices(true, &[], None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().starts_with("`config.executor` is a RAM executor"), "{e}");
        assert_eq!(plan_devices(true, &[2, 5], None).unwrap(), [0, 1]);
        assert_eq!(plan_devices(true, &[2, 5], Some(&[5])).unwrap(), [1]);
        let e = plan_devices(true, &[2, 5], Some(&[3])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(
            e.message(),
            "`config.devices` names device ordinal 3, which the executor does not drive (it drives 2, 5)"
        );
        assert!(plan_devices(true, &[2, 5], Some(&[5, 5])).unwrap_err().message().contains("twice"));
        assert!(plan_devices(true, &[2], Some(&[])).unwrap_err().message().contains("empty list"));
    }
}
