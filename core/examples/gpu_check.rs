//! The device check's steps, one per invocation: `gpu_check STEP` prints one line, `PASS STEP: …`, `FAIL STEP: …`
//! or `SKIP STEP: …` (no CUDA driver, or no NVIDIA GPU), and exits 0, 1 or 3. `scripts/gpu-check.sh` runs every
//! step from a prebuilt kit (`cargo xtask gpu-kit`) under its own timeout; no cargo is needed on the GPU machine.
//! Each step runs in a fresh process, so no step sees CUDA state another left behind (the `fork` step needs that).
//!
//! Steps: context, streams, roundtrip, drain, borrowed, fork, multicast, cycles, visible (see each function).

use cudarc::driver::{result as cu, sys};
use std::process::{Command, ExitCode};
use std::time::Instant;
use uform_core::{Error, ErrorKind, Executor, ExecutorForVramConfig, GpuVendor, Mesh, MeshOptions, Mood, MultimemTier};

const STEPS: [&str; 9] =
    ["context", "streams", "roundtrip", "drain", "borrowed", "fork", "multicast", "cycles", "visible"];

enum Out {
    Pass(String),
    Skip(String),
}

type Step = Result<Out, String>;

fn ck(result: sys::CUresult, what: &str) -> Result<(), String> {
    result.result().map_err(|e| format!("{what}: {e:?}"))
}

fn current() -> Result<sys::CUcontext, String> {
    Ok(cu::ctx::get_current().map_err(|e| format!("cuCtxGetCurrent: {e:?}"))?.unwrap_or(std::ptr::null_mut()))
}

fn set_current(context: sys::CUcontext) -> Result<(), String> {
    // SAFETY: a live context of this process, or null.
    unsafe { cu::ctx::set_current(context) }.map_err(|e| format!("cuCtxSetCurrent: {e:?}"))
}

/// The NVIDIA devices as (`gpuDevices()` ordinal, CUDA ordinal, name).
fn nvidia() -> Vec<(u32, u32, String)> {
    uform_core::gpu_devices()
        .iter()
        .enumerate()
        .filter(|(_, d)| d.vendor == GpuVendor::Nvidia)
        .map(|(i, d)| (i as u32, d.vendor_ordinal, d.name.clone()))
        .collect()
}

fn vram(devices: Vec<u32>, streams: Option<Vec<u64>>) -> Result<Executor, Error> {
    Executor::for_vram(ExecutorForVramConfig { devices: Some(devices), streams, ..Default::default() })
}

fn open(devices: Vec<u32>) -> Result<Executor, String> {
    vram(devices, None).map_err(|e| format!("forVram: {e}"))
}

/// The primary context of CUDA device `cuda`, retained (released by the process's exit).
fn primary(cuda: u32) -> Result<(sys::CUdevice, sys::CUcontext), String> {
    cu::init().map_err(|e| format!("cuInit: {e:?}"))?;
    let device = cu::device::get(cuda as i32).map_err(|e| format!("cuDeviceGet: {e:?}"))?;
    // SAFETY: a device from cuDeviceGet.
    let context = unsafe { cu::primary_ctx::retain(device) }.map_err(|e| format!("retain: {e:?}"))?;
    Ok((device, context))
}

/// A context that is not the device's primary one, made current, as a library with its own context would hold.
fn foreign_context(device: sys::CUdevice) -> Result<sys::CUcontext, String> {
    let mut context = std::ptr::null_mut();
    // SAFETY: a device from cuDeviceGet; the driver writes the handle.
    ck(unsafe { sys::cuCtxCreate_v2(&mut context, 0, device) }, "cuCtxCreate")?;
    Ok(context)
}

/// The caller's current context is the same after forVram, drain and free as before: a foreign one, then none.
fn context() -> Step {
    let (first, cuda, _) = nvidia()[0].clone();
    let (device, _) = primary(cuda)?;
    let mine = foreign_context(device)?;
    for (label, expected) in [("a foreign context", mine), ("no context", std::ptr::null_mut())] {
        set_current(expected)?;
        let executor = open(vec![first])?;
        let after_open = current()?;
        executor.drain(Mood::Parked).map_err(|e| format!("drain: {e}"))?;
        executor.free().map_err(|e| format!("free: {e}"))?;
        let after_free = current()?;
        if after_open != expected || after_free != expected {
            return Err(format!(
                "with {label} current ({expected:?}): {after_open:?} after forVram, {after_free:?} after free"
            ));
        }
    }
    // SAFETY: created above, no longer current.
    ck(unsafe { sys::cuCtxDestroy_v2(mine) }, "cuCtxDestroy")?;
    Ok(Out::Pass("a foreign current context and no current context both survive forVram, drain and free".into()))
}

/// Every own stream belongs to its device's primary context and is non-blocking.
fn streams() -> Step {
    let devices = nvidia();
    let executor = open(devices.iter().map(|d| d.0).collect())?;
    let addresses = executor.stream_addresses();
    for ((ordinal, cuda, _), &stream) in devices.iter().zip(&addresses) {
        let (_, primary) = primary(*cuda)?;
        let (mut context, mut flags) = (std::ptr::null_mut(), 0u32);
        // SAFETY: a live stream of the executor.
        ck(unsafe { sys::cuStreamGetCtx(stream as sys::CUstream, &mut context) }, "cuStreamGetCtx")?;
        // SAFETY: as above.
        ck(unsafe { sys::cuStreamGetFlags(stream as sys::CUstream, &mut flags) }, "cuStreamGetFlags")?;
        if context != primary {
            return Err(format!("device {ordinal}: stream {stream:#x} is on {context:?}, the primary is {primary:?}"));
        }
        if flags & sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32 == 0 {
            return Err(format!("device {ordinal}: stream {stream:#x} has flags {flags:#x}, not non-blocking"));
        }
    }
    executor.free().map_err(|e| format!("free: {e}"))?;
    if !executor.stream_addresses().is_empty() {
        return Err("stream_addresses() still lists streams after free".into());
    }
    Ok(Out::Pass(format!("{} stream(s) on their primary contexts, non-blocking, gone after free", addresses.len())))
}

/// Fills `bytes` of fresh device memory with `value` on `stream`, copies it back and checks every byte.
fn fill_and_read(primary: usize, stream: u64, bytes: usize, value: u8) -> Result<(), String> {
    let previous = current()?;
    set_current(primary as sys::CUcontext)?;
    let result = (|| {
        // SAFETY: the primary context is current; the buffer is freed below after the stream finished.
        let buffer = unsafe { cu::malloc_sync(bytes) }.map_err(|e| format!("cuMemAlloc: {e:?}"))?;
        let mut host = vec![0u8; bytes];
        let stream = stream as sys::CUstream;
        let copied = (|| {
            // SAFETY: the buffer holds `bytes`; `host` outlives the synchronisation.
            ck(unsafe { sys::cuMemsetD8Async(buffer, value, bytes, stream) }, "cuMemsetD8Async")?;
            // SAFETY: as above.
            unsafe { cu::memcpy_dtoh_async(&mut host, buffer, stream) }.map_err(|e| format!("copy back: {e:?}"))?;
            // SAFETY: a live stream of the executor.
            unsafe { cu::stream::synchronize(stream) }.map_err(|e| format!("cuStreamSynchronize: {e:?}"))
        })();
        // SAFETY: allocated above, the stream is idle.
        let _ = unsafe { cu::free_sync(buffer) };
        copied?;
        match host.iter().position(|&b| b != value) {
            Some(i) => Err(format!("byte {i} reads {:#x}, expected {value:#x}", host[i])),
            None => Ok(()),
        }
    })();
    set_current(previous)?;
    result
}

/// A memset and a copy back on the executor's stream, from the calling thread and from one of its workers.
fn roundtrip() -> Step {
    let (first, cuda, _) = nvidia()[0].clone();
    let (_, primary) = primary(cuda)?;
    let executor = open(vec![first])?;
    let stream = executor.stream_addresses()[0];
    fill_and_read(primary as usize, stream, 64 << 20, 0xa5)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let context = primary as usize;
    executor
        .submit(move || {
            let _ = tx.send((
                std::thread::current().name().map(str::to_string),
                fill_and_read(context, stream, 64 << 20, 0x5a),
            ));
        })
        .map_err(|e| format!("submit: {e}"))?;
    executor.drain(Mood::Parked).map_err(|e| format!("drain: {e}"))?;
    let (thread, result) = rx.recv().map_err(|_| "the deferred call never ran".to_string())?;
    result.map_err(|e| format!("from thread {thread:?}: {e}"))?;
    executor.free().map_err(|e| format!("free: {e}"))?;
    Ok(Out::Pass(format!("64 MiB memset + copy back, from the caller and from thread {thread:?}")))
}

/// `drain` waits for work queued on the executor's stream: the stream is busy before and idle after.
fn drain() -> Step {
    let (first, cuda, _) = nvidia()[0].clone();
    let (_, primary) = primary(cuda)?;
    let executor = open(vec![first])?;
    let stream = executor.stream_addresses()[0] as sys::CUstream;
    let previous = current()?;
    set_current(primary)?;
    let bytes = 1usize << 30;
    // SAFETY: the primary context is current; freed after the stream is idle.
    let buffer = unsafe { cu::malloc_sync(bytes) }.map_err(|e| format!("cuMemAlloc: {e:?}"))?;
    for _ in 0..2000 {
        // SAFETY: the buffer holds `bytes`.
        ck(unsafe { sys::cuMemsetD8Async(buffer, 7, bytes, stream) }, "cuMemsetD8Async")?;
    }
    set_current(previous)?;
    // SAFETY: a live stream.
    let busy = unsafe { sys::cuStreamQuery(stream) } == sys::CUresult::CUDA_ERROR_NOT_READY;
    let start = Instant::now();
    executor.drain(Mood::Parked).map_err(|e| format!("drain: {e}"))?;
    let waited = start.elapsed();
    // SAFETY: a live stream.
    let after = unsafe { sys::cuStreamQuery(stream) };
    set_current(primary)?;
    // SAFETY: allocated above, the stream is drained.
    let _ = unsafe { cu::free_sync(buffer) };
    set_current(previous)?;
    executor.free().map_err(|e| format!("free: {e}"))?;
    if !busy {
        return Err("2000 memsets of 1 GiB finished before drain was called: the check proves nothing".into());
    }
    if after != sys::CUresult::CUDA_SUCCESS {
        return Err(format!("after drain the stream reports {after:?}, not idle"));
    }
    Ok(Out::Pass(format!(
        "drain waited {:.1} ms for 2000 queued 1 GiB memsets; the stream is idle after",
        waited.as_secs_f64() * 1e3
    )))
}

fn refused(result: Result<Executor, Error>, needle: &str) -> Result<(), String> {
    match result {
        Err(e) if e.kind() == ErrorKind::InvalidArgument && e.message().contains(needle) => Ok(()),
        Err(e) => Err(format!("expected an invalid argument naming {needle:?}, got {:?}: {e}", e.kind())),
        Ok(executor) => {
            let _ = executor.free();
            Err(format!("accepted a stream it should refuse ({needle})"))
        }
    }
}

/// Special handles, a stream of a foreign context, refused; a raw stream of the primary context accepted.
fn borrowed() -> Step {
    let (first, cuda, _) = nvidia()[0].clone();
    for (address, name) in [(0u64, "NULL"), (1, "CU_STREAM_LEGACY"), (2, "CU_STREAM_PER_THREAD")] {
        refused(vram(vec![first], Some(vec![address])), name)?;
    }
    let (device, primary) = primary(cuda)?;
    let previous = current()?;
    let foreign = foreign_context(device)?;
    let theirs = cu::stream::create(cu::stream::StreamKind::NonBlocking).map_err(|e| format!("{e:?}"))? as u64;
    set_current(primary)?;
    let ours = cu::stream::create(cu::stream::StreamKind::NonBlocking).map_err(|e| format!("{e:?}"))? as u64;
    set_current(previous)?;
    refused(vram(vec![first], Some(vec![theirs])), "another context")?;
    let executor = vram(vec![first], Some(vec![ours])).map_err(|e| format!("a primary-context stream: {e}"))?;
    let kept = executor.stream_addresses();
    executor.free().map_err(|e| format!("free: {e}"))?;
    if kept != [ours] {
        return Err(format!("borrowed {ours:#x}, stream_addresses() says {kept:x?}"));
    }
    // SAFETY: created above; the borrower is freed.
    unsafe {
        let _ = cu::stream::destroy(theirs as sys::CUstream);
        let _ = cu::stream::destroy(ours as sys::CUstream);
        let _ = sys::cuCtxDestroy_v2(foreign);
    }
    Ok(Out::Pass("0, 0x1, 0x2 and a foreign-context stream refused; a primary-context stream borrowed".into()))
}

/// After `capabilitiesAvailable` and `gpuDevices` (and nothing else) in the parent, a forked child opens an executor.
fn fork() -> Step {
    let _ = uform_core::capabilities_available();
    let first = nvidia()[0].0;
    // SAFETY: the child only opens and frees an executor, then exits without unwinding into the parent's state.
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            let code = match open(vec![first]).and_then(|e| e.free().map_err(|e| format!("free: {e}"))) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("fork child: {e}");
                    1
                }
            };
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(code) }
        }
        child => {
            let mut status = 0;
            // SAFETY: our own child.
            unsafe { libc::waitpid(child, &mut status, 0) };
            if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                Ok(Out::Pass(
                    "a child forked after capabilitiesAvailable and gpuDevices opened and freed an executor".into(),
                ))
            } else {
                Err(format!("the forked child failed (wait status {status:#x}); discovery left CUDA initialised?"))
            }
        }
    }
}

/// Where a mesh of this process says `switch-reduced`, a multicast object really is created over its devices.
fn multicast() -> Step {
    let devices = nvidia();
    let executor = open(devices.iter().map(|d| d.0).collect())?;
    let mesh = Mesh::bootstrap(&executor, MeshOptions::default()).map_err(|e| format!("Mesh.bootstrap: {e}"))?;
    let tier = mesh.describe().map_err(|e| format!("describe: {e}"))?.multimem_tier;
    let _ = mesh.free();
    if tier != MultimemTier::SwitchReduced {
        let _ = executor.free();
        return Ok(Out::Skip(format!("the mesh's tier is {tier:?}, not switch-reduced: no multicast to create")));
    }
    cu::init().map_err(|e| format!("cuInit: {e:?}"))?;
    let mut prop = sys::CUmulticastObjectProp {
        numDevices: devices.len() as u32,
        size: 0,
        handleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR.0 as u64,
        flags: 0,
    };
    let mut granularity = 0usize;
    let recommended = sys::CUmulticastGranularity_flags::CU_MULTICAST_GRANULARITY_RECOMMENDED;
    // SAFETY: the driver reads `prop` and writes the granularity / handle.
    ck(unsafe { sys::cuMulticastGetGranularity(&mut granularity, &prop, recommended) }, "cuMulticastGetGranularity")?;
    prop.size = granularity.max(2 << 20);
    let mut handle = 0;
    // SAFETY: as above.
    ck(unsafe { sys::cuMulticastCreate(&mut handle, &prop) }, "cuMulticastCreate")?;
    for (ordinal, cuda, _) in &devices {
        let device = cu::device::get(*cuda as i32).map_err(|e| format!("{e:?}"))?;
        // SAFETY: the multicast object made above, and a device of this machine.
        ck(unsafe { sys::cuMulticastAddDevice(handle, device) }, &format!("cuMulticastAddDevice({ordinal})"))?;
    }
    // SAFETY: the multicast object made above, released once.
    let _ = unsafe { sys::cuMemRelease(handle) };
    executor.free().map_err(|e| format!("free: {e}"))?;
    Ok(Out::Pass(format!(
        "switch-reduced, and a multicast object of {} bytes spans {} device(s)",
        prop.size,
        devices.len()
    )))
}

/// 200 create/free cycles leave the device's free memory where one warm-up cycle left it.
fn cycles() -> Step {
    let (first, cuda, _) = nvidia()[0].clone();
    let (_, primary) = primary(cuda)?;
    let free_now = || -> Result<i64, String> {
        let previous = current()?;
        set_current(primary)?;
        let info = cu::mem_get_info().map_err(|e| format!("cuMemGetInfo: {e:?}"));
        set_current(previous)?;
        Ok(info?.0 as i64)
    };
    open(vec![first])?.free().map_err(|e| format!("free: {e}"))?;
    let before = free_now()?;
    let start = Instant::now();
    for i in 0..200 {
        let executor = open(vec![first]).map_err(|e| format!("cycle {i}: {e}"))?;
        executor.drain(Mood::Parked).map_err(|e| format!("cycle {i}: drain: {e}"))?;
        executor.free().map_err(|e| format!("cycle {i}: free: {e}"))?;
    }
    let elapsed = start.elapsed();
    let drift = before - free_now()?;
    if drift.abs() > 16 << 20 {
        return Err(format!("free device memory moved by {drift} bytes over 200 cycles (limit 16 MiB)"));
    }
    Ok(Out::Pass(format!("200 cycles in {:.0} ms, free memory moved by {drift} bytes", elapsed.as_secs_f64() * 1e3)))
}

/// What a child process sees with `CUDA_VISIBLE_DEVICES` set to `value`: "devices=N name=... forVram=...".
fn child_view(value: &str) -> Result<String, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = Command::new(me).arg("view").env("CUDA_VISIBLE_DEVICES", value).output().map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn view() {
    let devices = uform_core::gpu_devices();
    let opened = match Executor::for_vram(ExecutorForVramConfig::default()) {
        Ok(executor) => executor.free().map_or_else(|e| format!("{:?}", e.kind()), |()| "ok".into()),
        Err(e) => format!("{:?}", e.kind()),
    };
    let name = devices.first().map_or("-", |d| d.name.as_str());
    println!("devices={} name={name} forVram={opened}", devices.len());
}

/// `CUDA_VISIBLE_DEVICES` empty and invalid: no device, forVram unavailable; set to device 0's UUID: that device.
fn visible() -> Step {
    let (_, cuda, name) = nvidia()[0].clone();
    cu::init().map_err(|e| format!("cuInit: {e:?}"))?;
    let device = cu::device::get(cuda as i32).map_err(|e| format!("{e:?}"))?;
    let mut uuid = sys::CUuuid { bytes: [0; 16] };
    // SAFETY: the driver writes 16 bytes.
    ck(unsafe { sys::cuDeviceGetUuid_v2(&mut uuid, device) }, "cuDeviceGetUuid")?;
    let b: Vec<u8> = uuid.bytes.iter().map(|&c| c as u8).collect();
    let hex = |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    let uuid = format!("GPU-{}-{}-{}-{}-{}", hex(0..4), hex(4..6), hex(6..8), hex(8..10), hex(10..16));
    let none = "devices=0 name=- forVram=Unavailable".to_string();
    for (value, expected) in
        [("", none.clone()), ("99", none), (uuid.as_str(), format!("devices=1 name={name} forVram=ok"))]
    {
        let seen = child_view(value)?;
        if seen != expected {
            return Err(format!("CUDA_VISIBLE_DEVICES={value:?}: the child saw {seen:?}, expected {expected:?}"));
        }
    }
    Ok(Out::Pass(format!("empty, invalid and UUID-valued ({uuid}) CUDA_VISIBLE_DEVICES behave")))
}

fn main() -> ExitCode {
    let step = std::env::args().nth(1).unwrap_or_default();
    if step == "view" {
        view();
        return ExitCode::SUCCESS;
    }
    if !STEPS.contains(&step.as_str()) {
        eprintln!("usage: gpu_check <{}>", STEPS.join("|"));
        return ExitCode::from(2);
    }
    // SAFETY: only probes whether the driver library loads.
    let outcome = if !unsafe { sys::is_culib_present() } {
        Ok(Out::Skip("no CUDA driver library (libcuda) on this machine".into()))
    } else if nvidia().is_empty() {
        Ok(Out::Skip("gpuDevices() lists no NVIDIA GPU".into()))
    } else {
        match step.as_str() {
            "context" => context(),
            "streams" => streams(),
            "roundtrip" => roundtrip(),
            "drain" => drain(),
            "borrowed" => borrowed(),
            "fork" => fork(),
            "multicast" => multicast(),
            "cycles" => cycles(),
            _ => visible(),
        }
    };
    match outcome {
        Ok(Out::Pass(what)) => {
            println!("PASS {step}: {what}");
            ExitCode::SUCCESS
        }
        Ok(Out::Skip(why)) => {
            println!("SKIP {step}: {why}");
            ExitCode::from(3)
        }
        Err(why) => {
            println!("FAIL {step}: {why}");
            ExitCode::FAILURE
        }
    }
}
