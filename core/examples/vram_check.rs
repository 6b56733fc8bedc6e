//! The VRAM executor on a machine with GPUs: one executor per NVIDIA device, then one over all of them, each with
//! its own CUDA streams, then one over borrowed streams; every stream address is checked, drained and freed.
//! Exits non-zero on the first failure. `scripts/gpu-check.sh` runs it after comparing the device list with
//! nvidia-smi; on a machine without GPUs it prints that there is nothing to check and exits 2.

use uform_core::{Executor, ExecutorForVramConfig, GpuVendor, Mood};

fn check(label: &str, config: ExecutorForVramConfig, expected_streams: usize) -> Result<Vec<u64>, String> {
    let executor = Executor::for_vram(config).map_err(|e| format!("{label}: forVram failed: {e}"))?;
    let streams = executor.stream_addresses();
    if streams.len() != expected_streams || streams.contains(&0) {
        return Err(format!("{label}: expected {expected_streams} non-zero streams, got {streams:x?}"));
    }
    let devices = executor.devices().map_err(|e| format!("{label}: devices failed: {e}"))?;
    if devices.len() != expected_streams {
        return Err(format!("{label}: drives {} devices, expected {expected_streams}", devices.len()));
    }
    for mood in [Mood::Spinning, Mood::Parked] {
        executor.drain(mood).map_err(|e| format!("{label}: drain({mood:?}) failed: {e}"))?;
    }
    executor.free().map_err(|e| format!("{label}: free failed: {e}"))?;
    executor.free().map_err(|e| format!("{label}: a second free failed: {e}"))?;
    if executor.drain(Mood::Parked).is_ok() {
        return Err(format!("{label}: drain after free succeeded"));
    }
    println!("{label}: ok, streams {streams:x?}");
    Ok(streams)
}

fn run() -> Result<usize, String> {
    let nvidia: Vec<u32> = uform_core::gpu_devices()
        .iter()
        .enumerate()
        .filter(|(_, d)| d.vendor == GpuVendor::Nvidia)
        .map(|(i, _)| i as u32)
        .collect();
    for &ordinal in &nvidia {
        check(
            &format!("device {ordinal}"),
            ExecutorForVramConfig { devices: Some(vec![ordinal]), ..Default::default() },
            1,
        )?;
    }
    let all =
        ExecutorForVramConfig { devices: Some(nvidia.clone()), scratch_limit: Some(1 << 30), ..Default::default() };
    check("all devices", all.clone(), nvidia.len())?;
    // Borrowed streams: another executor's live streams, kept in device order and left to their owner.
    let owner = Executor::for_vram(all).map_err(|e| format!("owner: forVram failed: {e}"))?;
    let owned = owner.stream_addresses();
    let borrowed =
        ExecutorForVramConfig { devices: Some(nvidia.clone()), streams: Some(owned.clone()), ..Default::default() };
    let kept = check("borrowed streams", borrowed, nvidia.len())?;
    if kept != owned {
        return Err(format!("borrowed streams came back as {kept:x?}, expected {owned:x?}"));
    }
    owner.drain(Mood::Parked).map_err(|e| format!("owner: drain after the borrower freed failed: {e}"))?;
    owner.free().map_err(|e| format!("owner: free failed: {e}"))?;
    let out_of_range = ExecutorForVramConfig { devices: Some(vec![nvidia.len() as u32 + 7]), ..Default::default() };
    match Executor::for_vram(out_of_range) {
        Err(e) if e.kind() == uform_core::ErrorKind::InvalidArgument => println!("out-of-range ordinal: ok ({e})"),
        other => return Err(format!("an out-of-range ordinal gave {other:?}")),
    }
    Ok(nvidia.len())
}

fn main() {
    if uform_core::gpu_devices().is_empty() {
        println!("vram-check: no GPU, nothing to check");
        std::process::exit(2);
    }
    match run() {
        Ok(n) => println!("vram-check: OK, VRAM executors on {n} NVIDIA device(s)"),
        Err(e) => {
            eprintln!("vram-check: {e}");
            std::process::exit(1);
        }
    }
}
