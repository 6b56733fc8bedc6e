//! AMD devices through the HIP runtime (`libamdhip64`), loaded at run time with libloading.
//!
//! HIP versions its property struct: since ROCm 6 the unversioned `hipGetDeviceProperties` is a macro for
//! `hipGetDevicePropertiesR0600`, and the exported unversioned symbol keeps the older R0000 layout for old
//! binaries. We call the R0600 symbol by name and read it through [`HipDevicePropR0600`], a field-by-field copy
//! of `hipDeviceProp_tR0600` from ROCm 6's `hip_runtime_api.h`. A runtime without that symbol (ROCm 5) has no
//! devices for us. The library stays loaded for the life of the process: unloading the HIP runtime while its
//! threads live is a known way to crash at exit.

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use libloading::Library;

use super::classes::amd_class;
use crate::types::{GpuDevice, GpuVendor};

/// `hipDeviceProp_tR0600`, exactly as ROCm 6 and 7 lay it out (`include/hip/hip_runtime_api.h`). Only `name`,
/// `totalGlobalMem`, `multiProcessorCount` and `gcnArchName` are read; every field is spelled out so that
/// `repr(C)` places those four where the C compiler does, which the offset test pins down.
#[repr(C)]
#[allow(non_snake_case)]
pub struct HipDevicePropR0600 {
    pub name: [c_char; 256],
    pub uuid: [c_char; 16],
    pub luid: [c_char; 8],
    pub luidDeviceNodeMask: c_uint,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub memPitch: usize,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub deviceOverlap: c_int,
    pub multiProcessorCount: c_int,
    pub kernelExecTimeoutEnabled: c_int,
    pub integrated: c_int,
    pub canMapHostMemory: c_int,
    pub computeMode: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture1DMipmap: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture2DMipmap: [c_int; 2],
    pub maxTexture2DLinear: [c_int; 3],
    pub maxTexture2DGather: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub maxTexture3DAlt: [c_int; 3],
    pub maxTextureCubemap: c_int,
    pub maxTexture1DLayered: [c_int; 2],
    pub maxTexture2DLayered: [c_int; 3],
    pub maxTextureCubemapLayered: [c_int; 2],
    pub maxSurface1D: c_int,
    pub maxSurface2D: [c_int; 2],
    pub maxSurface3D: [c_int; 3],
    pub maxSurface1DLayered: [c_int; 2],
    pub maxSurface2DLayered: [c_int; 3],
    pub maxSurfaceCubemap: c_int,
    pub maxSurfaceCubemapLayered: [c_int; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: c_int,
    pub ECCEnabled: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub pciDomainID: c_int,
    pub tccDriver: c_int,
    pub asyncEngineCount: c_int,
    pub unifiedAddressing: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub l2CacheSize: c_int,
    pub persistingL2CacheMaxSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub streamPrioritiesSupported: c_int,
    pub globalL1CacheSupported: c_int,
    pub localL1CacheSupported: c_int,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: c_int,
    pub managedMemory: c_int,
    pub isMultiGpuBoard: c_int,
    pub multiGpuBoardGroupID: c_int,
    pub hostNativeAtomicSupported: c_int,
    pub singleToDoublePrecisionPerfRatio: c_int,
    pub pageableMemoryAccess: c_int,
    pub concurrentManagedAccess: c_int,
    pub computePreemptionSupported: c_int,
    pub canUseHostPointerForRegisteredMem: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub maxBlocksPerMultiProcessor: c_int,
    pub accessPolicyMaxWindowSize: c_int,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: c_int,
    pub sparseHipArraySupported: c_int,
    pub hostRegisterReadOnlySupported: c_int,
    pub timelineSemaphoreInteropSupported: c_int,
    pub memoryPoolsSupported: c_int,
    pub gpuDirectRDMASupported: c_int,
    pub gpuDirectRDMAFlushWritesOptions: c_uint,
    pub gpuDirectRDMAWritesOrdering: c_int,
    pub memoryPoolSupportedHandleTypes: c_uint,
    pub deferredMappingHipArraySupported: c_int,
    pub ipcEventSupported: c_int,
    pub clusterLaunch: c_int,
    pub unifiedFunctionPointers: c_int,
    pub reserved: [c_int; 63],
    pub hipReserved: [c_int; 32],
    pub gcnArchName: [c_char; 256],
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub clockInstructionRate: c_int,
    /// `hipDeviceArch_t`: 21 one-bit fields in one `unsigned`.
    pub arch: c_uint,
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
}

/// The property struct with room after it, so a runtime whose struct grew cannot write past our buffer.
#[repr(C)]
struct PropertiesBuffer {
    properties: HipDevicePropR0600,
    _slack: [u8; 4096],
}

type HipInit = unsafe extern "C" fn(flags: c_uint) -> c_int;
type HipGetDeviceCount = unsafe extern "C" fn(count: *mut c_int) -> c_int;
type HipGetDeviceProperties = unsafe extern "C" fn(properties: *mut HipDevicePropR0600, device: c_int) -> c_int;

const HIP_SUCCESS: c_int = 0;

/// Where the HIP runtime may be: the loader's search path first (so `LD_LIBRARY_PATH` wins), then ROCm's
/// default prefix.
fn library_candidates() -> Vec<String> {
    let mut names: Vec<String> =
        ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"].iter().map(|s| s.to_string()).collect();
    if let Some(root) = std::env::var_os("ROCM_PATH") {
        names.push(format!("{}/lib/libamdhip64.so", root.to_string_lossy()));
    }
    names.push("/opt/rocm/lib/libamdhip64.so".to_string());
    names
}

/// Whether a HIP runtime library could be loaded.
pub fn runtime_present() -> bool {
    runtime().is_some()
}

fn runtime() -> Option<&'static Library> {
    static LIBRARY: OnceLock<Option<Library>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            // SAFETY: loading the HIP runtime runs its initialisers, which do not depend on anything we hold.
            library_candidates().into_iter().find_map(|name| unsafe { Library::new(name) }.ok())
        })
        .as_ref()
}

/// Every HIP device in the runtime's order (`HIP_VISIBLE_DEVICES` applies); empty without the runtime, without
/// the R0600 symbol, on a runtime error, or when the properties read back do not look like that layout.
pub fn devices() -> Vec<GpuDevice> {
    let Some(library) = runtime() else {
        return Vec::new();
    };
    catch_unwind(AssertUnwindSafe(|| read_devices(library))).ok().flatten().unwrap_or_default()
}

fn read_devices(library: &Library) -> Option<Vec<GpuDevice>> {
    // SAFETY: the symbols are looked up by their exported names and called with the C signatures of
    // hip_runtime_api.h; the properties pointer has room for the whole struct and more.
    unsafe {
        let init = library.get::<HipInit>(b"hipInit\0").ok()?;
        let count_devices = library.get::<HipGetDeviceCount>(b"hipGetDeviceCount\0").ok()?;
        let properties_of = library.get::<HipGetDeviceProperties>(b"hipGetDevicePropertiesR0600\0").ok()?;
        if init(0) != HIP_SUCCESS {
            return None;
        }
        let mut count: c_int = 0;
        if count_devices(&mut count) != HIP_SUCCESS {
            return None;
        }
        let mut devices = Vec::new();
        for ordinal in 0..count.max(0) {
            let mut buffer: Box<PropertiesBuffer> = Box::new(std::mem::zeroed());
            if properties_of(&mut buffer.properties, ordinal) != HIP_SUCCESS {
                return None;
            }
            devices.push(device_from_properties(ordinal as u32, &buffer.properties)?);
        }
        Some(devices)
    }
}

/// The device a properties struct describes; `None` when `gcnArchName` is not a gfx target, which is what a
/// layout other than R0600 would read back as.
pub fn device_from_properties(ordinal: u32, properties: &HipDevicePropR0600) -> Option<GpuDevice> {
    let arch = c_string(&properties.gcnArchName);
    if !arch.starts_with("gfx") {
        return None;
    }
    Some(GpuDevice {
        vendor: GpuVendor::Amd,
        vendor_ordinal: ordinal,
        gpu_class: amd_class(&arch).map(str::to_string),
        compute_units: u32::try_from(properties.multiProcessorCount).unwrap_or(0),
        memory_bytes: properties.totalGlobalMem as u64,
        name: c_string(&properties.name),
    })
}

/// A fixed-size C string field as text; a field without a terminating NUL is read to its end.
fn c_string(field: &[c_char]) -> String {
    // SAFETY: c_char and u8 have the same size and alignment.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(field.as_ptr().cast(), field.len()) };
    match CStr::from_bytes_until_nul(bytes) {
        Ok(text) => text.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The offsets and size of `hipDeviceProp_tR0600` on 64-bit Linux, as the C compiler lays out the ROCm 6
    /// header (cross-checked against a ctypes transcription of the same header).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn the_r0600_layout_matches_the_header() {
        assert_eq!(offset_of!(HipDevicePropR0600, name), 0);
        assert_eq!(offset_of!(HipDevicePropR0600, uuid), 256);
        assert_eq!(offset_of!(HipDevicePropR0600, luidDeviceNodeMask), 280);
        assert_eq!(offset_of!(HipDevicePropR0600, totalGlobalMem), 288);
        assert_eq!(offset_of!(HipDevicePropR0600, major), 360);
        assert_eq!(offset_of!(HipDevicePropR0600, multiProcessorCount), 388);
        assert_eq!(offset_of!(HipDevicePropR0600, surfaceAlignment), 568);
        assert_eq!(offset_of!(HipDevicePropR0600, sharedMemPerBlockOptin), 696);
        assert_eq!(offset_of!(HipDevicePropR0600, reserved), 780);
        assert_eq!(offset_of!(HipDevicePropR0600, gcnArchName), 1160);
        assert_eq!(offset_of!(HipDevicePropR0600, maxSharedMemoryPerMultiProcessor), 1416);
        assert_eq!(offset_of!(HipDevicePropR0600, hdpMemFlushCntl), 1432);
        assert_eq!(offset_of!(HipDevicePropR0600, asicRevision), 1468);
        assert_eq!(size_of::<HipDevicePropR0600>(), 1472);
    }

    fn properties(name: &str, arch: &str, memory: usize, units: c_int) -> Box<HipDevicePropR0600> {
        // SAFETY: every field is an integer, an array of integers or a raw pointer: all-zero is valid.
        let mut p: Box<HipDevicePropR0600> = Box::new(unsafe { std::mem::zeroed() });
        for (slot, byte) in p.name.iter_mut().zip(name.bytes()) {
            *slot = byte as c_char;
        }
        for (slot, byte) in p.gcnArchName.iter_mut().zip(arch.bytes()) {
            *slot = byte as c_char;
        }
        p.totalGlobalMem = memory;
        p.multiProcessorCount = units;
        p
    }

    #[test]
    fn a_device_is_read_from_its_properties() {
        let p = properties("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 192 << 30, 304);
        let device = device_from_properties(3, &p).unwrap();
        assert_eq!(device.vendor, GpuVendor::Amd);
        assert_eq!(device.vendor_ordinal, 3);
        assert_eq!(device.gpu_class.as_deref(), Some("amd-cdna3"));
        assert_eq!(device.compute_units, 304);
        assert_eq!(device.memory_bytes, 192 << 30);
        assert_eq!(device.name, "AMD Instinct MI300X");
    }

    #[test]
    fn an_unknown_target_has_no_class_and_a_foreign_layout_no_device() {
        let p = properties("AMD Radeon VII", "gfx906:sramecc-:xnack-", 16 << 30, 60);
        assert_eq!(device_from_properties(0, &p).unwrap().gpu_class, None);
        let garbage = properties("x", "\u{1}\u{2}", 1, 1);
        assert_eq!(device_from_properties(0, &garbage), None);
    }

    #[test]
    fn a_name_filling_its_field_is_read_to_the_end() {
        let long = "a".repeat(256);
        let p = properties(&long, "gfx90a", 1, 1);
        assert_eq!(c_string(&p.name), long);
    }

    #[test]
    fn without_the_runtime_there_are_no_devices_and_no_panic() {
        let devices = devices();
        if runtime().is_none() {
            assert!(devices.is_empty());
        }
        assert!(devices.iter().all(|d| d.vendor == GpuVendor::Amd));
    }
}
