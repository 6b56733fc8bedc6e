//! `Model.loadVram` on a machine with NVIDIA GPUs: writes a small safetensors file of several dtypes, loads it onto
//! every device of a VRAM executor, copies every tensor back from every device and compares the bytes with the file,
//! then checks the argument errors (a RAM executor, an ordinal the executor does not drive) and that freeing the
//! model lets the executor go. `scripts/gpu-check.sh` runs it; without a GPU it exits 2.

use cudarc::driver::{result as cu, CudaContext};
use std::io::Write;
use uform_core::*;

fn fixture(path: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let tensors: Vec<(String, &str, Vec<u64>, Vec<u8>)> = vec![
        ("w".into(), "F32", vec![3, 5], (0..60).map(|i| (i * 7) as u8).collect()),
        ("b".into(), "BF16", vec![5], (0..10).map(|i| (i * 13 + 1) as u8).collect()),
        ("empty".into(), "U8", vec![0], vec![]),
        ("ids".into(), "I64", vec![4], (0..32).map(|i| (255 - i) as u8).collect()),
    ];
    let mut offset = 0;
    let mut entries = Vec::new();
    for (name, dtype, shape, data) in &tensors {
        let end = offset + data.len();
        entries.push(format!(r#""{name}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{offset},{end}]}}"#));
        offset = end;
    }
    let header = format!("{{{}}}", entries.join(","));
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    for t in &tensors {
        f.write_all(&t.3).unwrap();
    }
    tensors.into_iter().map(|t| (t.0, t.3)).collect()
}

fn run(ordinals: Vec<u32>) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("uform-vram-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join("model.safetensors");
    let expected = fixture(&file);
    let path = file.to_str().unwrap();
    let executor = Executor::for_vram(ExecutorForVramConfig { devices: Some(ordinals.clone()), ..Default::default() })
        .map_err(|e| format!("forVram failed: {e}"))?;
    let model =
        Model::load_vram(path, ModelLoadVramConfig { executor: executor.clone(), devices: None, revision: None })
            .map_err(|e| format!("loadVram failed: {e}"))?;
    let d = model.describe().map_err(|e| e.to_string())?;
    if d.residency != Residency::Vram || d.devices != ordinals || d.bytes != 102 || d.tensors.len() != 4 {
        return Err(format!("unexpected description: {d:?}"));
    }
    for (i, &ordinal) in ordinals.iter().enumerate() {
        let device = &executor.devices().unwrap()[i];
        let context = CudaContext::new(device.vendor_ordinal as usize).map_err(|e| format!("{e:?}"))?;
        context.bind_to_thread().map_err(|e| format!("{e:?}"))?;
        for (name, bytes) in &expected {
            let (address, len) = model
                .device_tensor(ordinal, name)
                .map_err(|e| e.to_string())?
                .ok_or(format!("device {ordinal} has no tensor {name}"))?;
            if len != bytes.len() {
                return Err(format!("device {ordinal}, tensor {name}: {len} bytes, expected {}", bytes.len()));
            }
            let mut back = vec![0u8; len];
            if len > 0 {
                // SAFETY: the model's buffer holds `len` bytes at `address` in this device's context.
                unsafe { cu::memcpy_dtoh_sync(&mut back, address) }.map_err(|e| format!("{e:?}"))?;
            }
            if &back != bytes {
                return Err(format!("device {ordinal}, tensor {name}: the bytes read back differ from the file"));
            }
        }
        println!("device {ordinal}: {} tensors read back byte for byte", expected.len());
    }
    match executor.free() {
        Err(e) if e.kind() == ErrorKind::InUse => {}
        other => return Err(format!("freeing the executor under a VRAM model gave {other:?}")),
    }
    let missing = ordinals.iter().max().unwrap() + 100;
    match Model::load_vram(
        path,
        ModelLoadVramConfig { executor: executor.clone(), devices: Some(vec![missing]), revision: None },
    ) {
        Err(e) if e.kind() == ErrorKind::InvalidArgument => println!("ordinal {missing}: ok ({e})"),
        other => return Err(format!("ordinal {missing} gave {other:?}")),
    }
    let ram = Executor::for_ram(ExecutorForRamConfig { threads: Some(1), ..Default::default() }).unwrap();
    match Model::load_vram(path, ModelLoadVramConfig { executor: ram, devices: None, revision: None }) {
        Err(e) if e.kind() == ErrorKind::InvalidArgument => println!("RAM executor: ok ({e})"),
        other => return Err(format!("a RAM executor gave {other:?}")),
    }
    model.free().map_err(|e| e.to_string())?;
    executor.free().map_err(|e| format!("freeing the executor after the model failed: {e}"))?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() {
    let nvidia: Vec<u32> = gpu_devices()
        .iter()
        .enumerate()
        .filter(|(_, d)| d.vendor == GpuVendor::Nvidia)
        .map(|(i, _)| i as u32)
        .collect();
    if nvidia.is_empty() {
        println!("model-vram-check: no NVIDIA GPU, nothing to check");
        std::process::exit(2);
    }
    match run(nvidia.clone()) {
        Ok(()) => println!("model-vram-check: OK, a model loaded to {} device(s) and read back", nvidia.len()),
        Err(e) => {
            eprintln!("model-vram-check: {e}");
            std::process::exit(1);
        }
    }
}
