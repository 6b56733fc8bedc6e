//! The rules of `forVram` that need no GPU: which device absent `devices` takes, which borrowed stream addresses
//! are refused, whether `gpuClass` and `scratchLimit` fit the chosen devices. `vram.rs` applies them to what the
//! driver reports; the tests here feed them recorded data.

use crate::error::{Error, Result};
use crate::path::name;
use crate::types::GpuDevice;

/// The variables that name this process's rank on its host, in the order they are read: torchrun's, then Slurm's.
pub(crate) const LOCAL_RANK_VARIABLES: [&str; 2] = ["LOCAL_RANK", "SLURM_LOCALID"];

/// `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD`: special handles, not streams an executor may borrow.
pub(crate) const CU_STREAM_LEGACY: u64 = 0x1;
pub(crate) const CU_STREAM_PER_THREAD: u64 = 0x2;

/// The device ordinal `forVram` takes when `devices` is absent: the local rank from the first of
/// [`LOCAL_RANK_VARIABLES`] that `env` has, or 0 when neither is set, among `visible` devices. A launcher that
/// gives each rank one device of its own (`CUDA_VISIBLE_DEVICES` per rank, Slurm's `--gpus-per-task=1`) leaves
/// one visible device, which every rank takes. Otherwise a rank past the last device is an invalid argument that
/// names the variable: wrapping around would put two ranks on one GPU without a word.
pub(crate) fn default_ordinal(env: impl Fn(&str) -> Option<String>, visible: usize) -> Result<u32> {
    let Some((variable, value)) = LOCAL_RANK_VARIABLES.iter().find_map(|v| env(v).map(|value| (*v, value))) else {
        return Ok(0);
    };
    let rank: u32 = value.trim().parse().map_err(|_| {
        Error::invalid_argument(
            "config.devices",
            format!(
                "is absent, so {} reads the local rank from {variable}, which holds {value:?}, not a rank",
                name("for_vram")
            ),
        )
    })?;
    if visible == 1 {
        return Ok(0);
    }
    if (rank as usize) < visible {
        return Ok(rank);
    }
    Err(Error::invalid_argument(
        "config.devices",
        format!(
            "is absent, so {} takes the device of local rank {variable}={rank}, but {} lists {visible} device{}; pass \
             {}, or give each rank its own device (CUDA_VISIBLE_DEVICES)",
            name("for_vram"),
            name("gpu_devices()"),
            if visible == 1 { "" } else { "s" },
            name("config.devices")
        ),
    ))
}

/// Borrowed stream addresses the executor refuses without asking the driver: 0 (the legacy default stream),
/// `CU_STREAM_LEGACY`, `CU_STREAM_PER_THREAD`, and one address given for two devices (a stream lives on one).
pub(crate) fn check_stream_addresses(streams: &[u64]) -> Result<()> {
    for (i, &address) in streams.iter().enumerate() {
        let special = match address {
            0 => Some("0 (the NULL stream)"),
            CU_STREAM_LEGACY => Some("0x1 (CU_STREAM_LEGACY)"),
            CU_STREAM_PER_THREAD => Some("0x2 (CU_STREAM_PER_THREAD)"),
            _ => None,
        };
        if let Some(what) = special {
            return Err(Error::invalid_argument(
                "config.streams",
                format!("holds {what} at position {i}: borrow a stream created with cuStreamCreate on the device"),
            ));
        }
        if let Some(first) = streams[..i].iter().position(|&a| a == address) {
            return Err(Error::invalid_argument(
                "config.streams",
                format!("holds {address:#x} at positions {first} and {i}: a stream belongs to one device"),
            ));
        }
    }
    Ok(())
}

/// `gpuClass` (already validated as a known class) against the class of each chosen device, given as
/// (`gpuDevices()` ordinal, device).
pub(crate) fn check_class(gpu_class: Option<&str>, chosen: &[(u32, &GpuDevice)]) -> Result<()> {
    let Some(wanted) = gpu_class else { return Ok(()) };
    for (ordinal, device) in chosen {
        if device.gpu_class.as_deref() != Some(wanted) {
            let actual = device.gpu_class.as_deref().unwrap_or("of no known class");
            return Err(Error::invalid_argument(
                "config.gpu_class",
                format!("is {wanted}, but device {ordinal} ({}) is {actual}", device.name),
            ));
        }
    }
    Ok(())
}

/// `scratchLimit` against the total memory of each chosen device: a ceiling above it can never bind.
pub(crate) fn check_scratch_limit(limit: Option<u64>, chosen: &[(u32, &GpuDevice)]) -> Result<()> {
    let Some(limit) = limit else { return Ok(()) };
    for (ordinal, device) in chosen {
        if device.memory_bytes > 0 && limit > device.memory_bytes {
            return Err(Error::invalid_argument(
                "config.scratch_limit",
                format!(
                    "is {limit} bytes, more than the {} bytes device {ordinal} ({}) has",
                    device.memory_bytes, device.name
                ),
            ));
        }
    }
    Ok(())
}

/// Whether device scratch of `held + more` bytes stays within `limit`: the check every device scratch allocation
/// makes before it allocates, so the ceiling holds however the scratch grows.
pub(crate) fn check_scratch_request(limit: Option<u64>, held: u64, more: u64) -> Result<()> {
    match limit {
        Some(limit) if held.saturating_add(more) > limit => Err(Error::new(
            crate::error::ErrorKind::OutOfMemory,
            format!(
                "device scratch of {held} + {more} bytes would pass the executor's {} of {limit} bytes",
                name("config.scratch_limit")
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GpuVendor;
    use crate::ErrorKind;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn absent_devices_take_the_local_rank() {
        assert_eq!(default_ordinal(env(&[]), 8).unwrap(), 0);
        assert_eq!(default_ordinal(env(&[("LOCAL_RANK", "3")]), 8).unwrap(), 3);
        assert_eq!(default_ordinal(env(&[("SLURM_LOCALID", "5")]), 8).unwrap(), 5);
        // torchrun's variable wins over Slurm's when both are set (torchrun inside an allocation).
        assert_eq!(default_ordinal(env(&[("LOCAL_RANK", "1"), ("SLURM_LOCALID", "6")]), 8).unwrap(), 1);
        // One visible device per rank: every rank takes it.
        assert_eq!(default_ordinal(env(&[("SLURM_LOCALID", "7")]), 1).unwrap(), 0);
        let e = default_ordinal(env(&[("LOCAL_RANK", "8")]), 8).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("LOCAL_RANK=8") && e.message().contains("lists 8 devices"), "{e}");
        let e = default_ordinal(env(&[("SLURM_LOCALID", "2")]), 2).unwrap_err();
        assert!(e.message().contains("SLURM_LOCALID=2"), "{e}");
        let e = default_ordinal(env(&[("LOCAL_RANK", "one")]), 8).unwrap_err();
        assert!(e.message().contains("LOCAL_RANK") && e.message().contains("\"one\""), "{e}");
    }

    #[test]
    fn special_and_repeated_stream_addresses_are_refused() {
        assert!(check_stream_addresses(&[0x7f00_0000_1000, 0x7f00_0000_2000]).is_ok());
        assert!(check_stream_addresses(&[]).is_ok());
        for (address, what) in [(0, "NULL"), (1, "CU_STREAM_LEGACY"), (2, "CU_STREAM_PER_THREAD")] {
            let e = check_stream_addresses(&[0x7f00_0000_1000, address]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.message().contains(what) && e.message().contains("position 1"), "{e}");
        }
        let e = check_stream_addresses(&[0xabc0, 0xdef0, 0xabc0]).unwrap_err();
        assert!(e.message().contains("0xabc0 at positions 0 and 2"), "{e}");
    }

    fn device(class: Option<&str>, memory_bytes: u64) -> GpuDevice {
        GpuDevice {
            vendor: GpuVendor::Nvidia,
            gpu_class: class.map(str::to_string),
            memory_bytes,
            name: "NVIDIA H200".into(),
            ..GpuDevice::default()
        }
    }

    #[test]
    fn gpu_class_must_match_every_chosen_device() {
        let hopper = device(Some("nvidia-hopper"), 150_000_000_000);
        let unknown = device(None, 1 << 30);
        assert!(check_class(None, &[(0, &hopper)]).is_ok());
        assert!(check_class(Some("nvidia-hopper"), &[(0, &hopper), (1, &hopper)]).is_ok());
        let e = check_class(Some("nvidia-blackwell"), &[(0, &hopper)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "`config.gpu_class` is nvidia-blackwell, but device 0 (NVIDIA H200) is nvidia-hopper");
        let e = check_class(Some("nvidia-hopper"), &[(0, &hopper), (3, &unknown)]).unwrap_err();
        assert!(e.message().contains("device 3") && e.message().contains("no known class"), "{e}");
    }

    #[test]
    fn scratch_limit_fits_device_memory_and_binds_allocations() {
        let small = device(Some("nvidia-hopper"), 1000);
        assert!(check_scratch_limit(Some(1000), &[(0, &small)]).is_ok());
        assert!(check_scratch_limit(None, &[(0, &small)]).is_ok());
        let e = check_scratch_limit(Some(1001), &[(2, &small)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("1001 bytes") && e.message().contains("1000 bytes device 2"), "{e}");
        assert!(check_scratch_request(Some(100), 60, 40).is_ok());
        assert_eq!(check_scratch_request(Some(100), 60, 41).unwrap_err().kind(), ErrorKind::OutOfMemory);
        assert!(check_scratch_request(None, u64::MAX, 1).is_ok());
        assert!(check_scratch_request(Some(10), u64::MAX, 1).is_err(), "no overflow past the limit");
    }
}
