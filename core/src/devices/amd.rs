//! AMD devices through the HIP runtime (`libamdhip64`), loaded at run time with libloading.
//!
//! HIP versions its property struct: since ROCm 6 the unversioned `hipGetDeviceProperties` is a macro for
//! `hipGetDevicePropertiesR0600`, and the exported unversioned symbol keeps the older R0000 layout for old
//! binaries. `hipRuntimeGetVersion` picks the layout ([`layout_for_version`]): from 6.0 on we call the R0600
//! symbol and read the fields where [`HipDevicePropR0600`] (a field-by-field copy of `hipDeviceProp_tR0600`
//! from ROCm 6's `hip_runtime_api.h`) puts them; before 6.0 (ROCm 5) the unversioned symbol and the R0000
//! offsets ([`R0000`]). A device whose `gcnArchName` does not read as a gfx target is left out with a note, and
//! the others are kept. The library stays loaded for the life of the process: unloading the HIP runtime while its
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

/// Where the four fields we read sit in one layout of `hipDeviceProp_t` (64-bit Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The exported function that fills this layout.
    pub symbol: &'static [u8],
    pub total_global_mem: usize,
    pub multi_processor_count: usize,
    pub gcn_arch_name: usize,
}

/// ROCm 6 and later: `hipDeviceProp_tR0600`, filled by `hipGetDevicePropertiesR0600`.
pub const R0600: Layout = Layout {
    symbol: b"hipGetDevicePropertiesR0600\0",
    total_global_mem: std::mem::offset_of!(HipDevicePropR0600, totalGlobalMem),
    multi_processor_count: std::mem::offset_of!(HipDevicePropR0600, multiProcessorCount),
    gcn_arch_name: std::mem::offset_of!(HipDevicePropR0600, gcnArchName),
};

/// ROCm 5: `hipDeviceProp_t` as it was before ROCm 6 (kept since as `hipDeviceProp_tR0000`), filled by the
/// unversioned `hipGetDeviceProperties`: name[256], then totalGlobalMem at 256, multiProcessorCount at 336 and
/// gcnArchName at 396, after `gcnArch`.
pub const R0000: Layout = Layout {
    symbol: b"hipGetDeviceProperties\0",
    total_global_mem: 256,
    multi_processor_count: 336,
    gcn_arch_name: 396,
};

/// The layout a runtime of `hipRuntimeGetVersion` fills (HIP_VERSION: major * 10^7 + minor * 10^5 + patch):
/// R0600 from 6.0 on, R0000 before.
pub fn layout_for_version(version: i32) -> Layout {
    if version >= 60_000_000 {
        R0600
    } else {
        R0000
    }
}

/// Room for any layout and more, so a runtime whose struct grew cannot write past it; 8-byte aligned.
const BUFFER_WORDS: usize = 1024;

type HipInit = unsafe extern "C" fn(flags: c_uint) -> c_int;
type HipGetDeviceCount = unsafe extern "C" fn(count: *mut c_int) -> c_int;
type HipRuntimeGetVersion = unsafe extern "C" fn(version: *mut c_int) -> c_int;
type HipGetDeviceProperties = unsafe extern "C" fn(properties: *mut u64, device: c_int) -> c_int;

const HIP_SUCCESS: c_int = 0;

/// Where the HIP runtime may be: the loader's search path first (so `LD_LIBRARY_PATH` wins), then ROCm's
/// default prefix.
fn library_candidates() -> Vec<String> {
    let mut names: Vec<String> = ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"]
        .iter()
        .map(|s| s.to_string())
        .collect();
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

/// Every HIP device in the runtime's order (`HIP_VISIBLE_DEVICES` applies), and a note per failure: no runtime,
/// a runtime error (its code), or one device whose properties do not read as a gfx target (left out, the others
/// kept).
pub fn discover() -> (Vec<GpuDevice>, Vec<String>) {
    let Some(library) = runtime() else {
        return (Vec::new(), vec!["no HIP runtime: libamdhip64.so could not be loaded".into()]);
    };
    catch_unwind(AssertUnwindSafe(|| read_devices(library)))
        .unwrap_or_else(|_| (Vec::new(), vec!["the HIP runtime panicked while listing devices".into()]))
}

/// Every HIP device; empty without the runtime. See [`discover`] for why some may be missing.
pub fn devices() -> Vec<GpuDevice> {
    discover().0
}

fn read_devices(library: &Library) -> (Vec<GpuDevice>, Vec<String>) {
    let failed =
        |what: &str, code: c_int| (Vec::new(), vec![format!("HIP runtime: {what} failed with hipError {code}")]);
    // SAFETY: the symbols are looked up by their exported names and called with the C signatures of
    // hip_runtime_api.h; the properties buffer has room for every layout and more.
    unsafe {
        let Ok(init) = library.get::<HipInit>(b"hipInit\0") else {
            return (Vec::new(), vec!["HIP runtime: no hipInit".into()]);
        };
        let Ok(count_devices) = library.get::<HipGetDeviceCount>(b"hipGetDeviceCount\0") else {
            return (Vec::new(), vec!["HIP runtime: no hipGetDeviceCount".into()]);
        };
        let code = init(0);
        if code != HIP_SUCCESS {
            return failed("hipInit", code);
        }
        let mut version: c_int = 0;
        let layout = match library.get::<HipRuntimeGetVersion>(b"hipRuntimeGetVersion\0") {
            Ok(get_version) if get_version(&mut version) == HIP_SUCCESS => layout_for_version(version),
            _ => R0600,
        };
        let Ok(properties_of) = library.get::<HipGetDeviceProperties>(layout.symbol) else {
            let symbol = String::from_utf8_lossy(&layout.symbol[..layout.symbol.len() - 1]).into_owned();
            return (Vec::new(), vec![format!("HIP runtime {version} lacks {symbol}")]);
        };
        let mut count: c_int = 0;
        let code = count_devices(&mut count);
        if code != HIP_SUCCESS {
            return failed("hipGetDeviceCount", code);
        }
        let (mut devices, mut notes) = (Vec::new(), Vec::new());
        for ordinal in 0..count.max(0) {
            let mut buffer = vec![0u64; BUFFER_WORDS];
            let code = properties_of(buffer.as_mut_ptr(), ordinal);
            if code != HIP_SUCCESS {
                notes
                    .push(format!("HIP device {ordinal} left out: hipGetDeviceProperties failed with hipError {code}"));
                continue;
            }
            let bytes: Vec<u8> = buffer.iter().flat_map(|word| word.to_ne_bytes()).collect();
            match device_from_bytes(ordinal as u32, &layout, &bytes) {
                Ok(device) => devices.push(device),
                Err(why) => notes.push(format!("HIP device {ordinal} left out: {why}")),
            }
        }
        if count <= 0 {
            notes.push("the HIP runtime lists no device (HIP_VISIBLE_DEVICES may hide them)".into());
        }
        (devices, notes)
    }
}

/// The device a properties buffer of `layout` describes; `Err` when `gcnArchName` is not a gfx target, which is
/// what another layout would read back as. A gfx target the class table does not know gives a device without a
/// class.
pub fn device_from_bytes(ordinal: u32, layout: &Layout, bytes: &[u8]) -> Result<GpuDevice, String> {
    let field =
        |at: usize, len: usize| bytes.get(at..at + len).ok_or_else(|| "properties buffer too short".to_string());
    let arch = c_string(field(layout.gcn_arch_name, 256)?);
    if !arch.starts_with("gfx") {
        return Err(format!(
            "gcnArchName {arch:?} is not a gfx target (a hipDeviceProp_t layout this build does not know)"
        ));
    }
    let memory = u64::from_ne_bytes(field(layout.total_global_mem, 8)?.try_into().expect("8 bytes"));
    let units = i32::from_ne_bytes(field(layout.multi_processor_count, 4)?.try_into().expect("4 bytes"));
    Ok(GpuDevice {
        vendor: GpuVendor::Amd,
        vendor_ordinal: ordinal,
        gpu_class: amd_class(&arch).map(str::to_string),
        compute_units: u32::try_from(units).unwrap_or(0),
        memory_bytes: memory,
        name: c_string(field(0, 256)?),
    })
}

/// A fixed-size C string field as text; a field without a terminating NUL is read to its end.
fn c_string(bytes: &[u8]) -> String {
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

    /// A properties buffer of `layout` as a runtime would fill it, with the four fields we read.
    fn properties(layout: &Layout, name: &str, arch: &str, memory: u64, units: i32) -> Vec<u8> {
        let mut bytes = vec![0u8; BUFFER_WORDS * 8];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        bytes[layout.gcn_arch_name..layout.gcn_arch_name + arch.len()].copy_from_slice(arch.as_bytes());
        bytes[layout.total_global_mem..layout.total_global_mem + 8].copy_from_slice(&memory.to_ne_bytes());
        bytes[layout.multi_processor_count..layout.multi_processor_count + 4].copy_from_slice(&units.to_ne_bytes());
        bytes
    }

    #[test]
    fn a_device_is_read_from_its_properties_in_either_layout() {
        for layout in [R0600, R0000] {
            let p = properties(&layout, "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 192 << 30, 304);
            let device = device_from_bytes(3, &layout, &p).unwrap();
            assert_eq!(device.vendor, GpuVendor::Amd);
            assert_eq!(device.vendor_ordinal, 3);
            assert_eq!(device.gpu_class.as_deref(), Some("amd-cdna3"));
            assert_eq!(device.compute_units, 304);
            assert_eq!(device.memory_bytes, 192 << 30);
            assert_eq!(device.name, "AMD Instinct MI300X");
        }
    }

    #[test]
    fn the_runtime_version_picks_the_layout() {
        assert_eq!(layout_for_version(60_032_830), R0600); // ROCm 6.0.2
        assert_eq!(layout_for_version(70_000_000), R0600);
        assert_eq!(layout_for_version(50_731_921), R0000); // ROCm 5.7.1
        assert_eq!(layout_for_version(0), R0000);
        assert_eq!(R0600.gcn_arch_name, 1160);
        assert_eq!(R0000.symbol, b"hipGetDeviceProperties\0");
    }

    #[test]
    fn a_rocm5_buffer_read_as_rocm6_is_refused_not_misread() {
        let p = properties(&R0000, "AMD Instinct MI210", "gfx90a:sramecc+:xnack-", 64 << 30, 104);
        let e = device_from_bytes(0, &R0600, &p).unwrap_err();
        assert!(e.contains("not a gfx target"), "{e}");
        assert_eq!(device_from_bytes(0, &R0000, &p).unwrap().gpu_class.as_deref(), Some("amd-cdna2"));
        assert!(device_from_bytes(0, &R0600, &p[..1000]).unwrap_err().contains("too short"));
    }

    #[test]
    fn an_unknown_target_has_no_class_but_is_listed() {
        let p = properties(&R0600, "AMD Radeon VII", "gfx906:sramecc-:xnack-", 16 << 30, 60);
        let device = device_from_bytes(0, &R0600, &p).unwrap();
        assert_eq!((device.gpu_class, device.compute_units), (None, 60));
    }

    #[test]
    fn a_name_filling_its_field_is_read_to_the_end() {
        let long = "a".repeat(256);
        let p = properties(&R0600, &long, "gfx90a", 1, 1);
        assert_eq!(device_from_bytes(0, &R0600, &p).unwrap().name, long);
    }

    #[test]
    fn without_the_runtime_there_are_no_devices_and_no_panic() {
        let (devices, notes) = discover();
        if runtime().is_none() {
            assert!(devices.is_empty());
            assert_eq!(notes, vec!["no HIP runtime: libamdhip64.so could not be loaded".to_string()]);
        }
        assert!(devices.iter().all(|d| d.vendor == GpuVendor::Amd));
    }
}
