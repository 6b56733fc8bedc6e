//! NVML (`libnvidia-ml.so.1`), loaded at run time with libloading: what the management library knows without
//! initialising CUDA. Two uses:
//!
//! - [`compute_capabilities`]: the compute capability of every installed GPU, for `capabilitiesAvailable`, which
//!   must not call `cuInit` (a process that forks after `cuInit` has children that cannot use CUDA);
//! - [`fabric_of`]: a GPU's NVLink fabric (`nvmlDeviceGetGpuFabricInfoV`, or `nvmlDeviceGetGpuFabricInfo` on
//!   older drivers): its state, the status of its registration, and the cluster UUID and clique id that GPUs of
//!   one NVLink multicast domain share.
//!
//! Every failure (no library, a symbol the driver lacks, an NVML error) reads as "unknown", never as an error.
//! NVML is initialised once and never shut down: it is reference counted and cheap to keep.

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::OnceLock;

use libloading::Library;

use super::fabric::Fabric;

type Device = *mut c_void;
const NVML_SUCCESS: c_int = 0;
const UUID_LEN: usize = 16;

/// `nvmlGpuFabricInfo_t` (driver 530 on).
#[repr(C)]
struct FabricInfoV1 {
    cluster_uuid: [u8; UUID_LEN],
    status: c_int,
    clique_id: c_uint,
    state: u8,
}

/// `nvmlGpuFabricInfo_v2_t` (driver 550 on), asked for with its version word.
#[repr(C)]
struct FabricInfoV2 {
    version: c_uint,
    cluster_uuid: [u8; UUID_LEN],
    status: c_int,
    clique_id: c_uint,
    state: u8,
    health_mask: c_uint,
}

/// `nvmlGpuFabricInfo_v2`: the struct's size with the version in the top byte (`NVML_STRUCT_VERSION`).
const FABRIC_INFO_V2: c_uint = (std::mem::size_of::<FabricInfoV2>() as c_uint) | (2 << 24);

struct Nvml {
    library: Library,
}

fn nvml() -> Option<&'static Nvml> {
    static NVML: OnceLock<Option<Nvml>> = OnceLock::new();
    NVML.get_or_init(|| {
        // SAFETY: loading NVML runs no code that depends on us; nvmlInit_v2 takes no arguments.
        unsafe {
            let library = ["libnvidia-ml.so.1", "libnvidia-ml.so"].iter().find_map(|n| Library::new(*n).ok())?;
            let init = library.get::<unsafe extern "C" fn() -> c_int>(b"nvmlInit_v2\0").ok()?;
            (init() == NVML_SUCCESS).then_some(Nvml { library })
        }
    })
    .as_ref()
}

/// Whether NVML could be loaded and initialised.
pub fn present() -> bool {
    nvml().is_some()
}

impl Nvml {
    /// # Safety
    /// `T` must be the C signature of the symbol `name`.
    unsafe fn symbol<T: Copy>(&self, name: &[u8]) -> Option<T> {
        self.library.get::<T>(name).ok().map(|s| *s)
    }

    fn device_by_index(&self, index: c_uint) -> Option<Device> {
        // SAFETY: the signature of nvmlDeviceGetHandleByIndex_v2; `device` is a live local.
        unsafe {
            let get =
                self.symbol::<unsafe extern "C" fn(c_uint, *mut Device) -> c_int>(b"nvmlDeviceGetHandleByIndex_v2\0")?;
            let mut device: Device = std::ptr::null_mut();
            (get(index, &mut device) == NVML_SUCCESS).then_some(device)
        }
    }

    fn device_by_uuid(&self, uuid: &str) -> Option<Device> {
        let uuid = CString::new(uuid).ok()?;
        // SAFETY: the signature of nvmlDeviceGetHandleByUUID; `uuid` is NUL-terminated and outlives the call.
        unsafe {
            let get = self
                .symbol::<unsafe extern "C" fn(*const c_char, *mut Device) -> c_int>(b"nvmlDeviceGetHandleByUUID\0")?;
            let mut device: Device = std::ptr::null_mut();
            (get(uuid.as_ptr(), &mut device) == NVML_SUCCESS).then_some(device)
        }
    }

    fn count(&self) -> Option<c_uint> {
        // SAFETY: the signature of nvmlDeviceGetCount_v2.
        unsafe {
            let get = self.symbol::<unsafe extern "C" fn(*mut c_uint) -> c_int>(b"nvmlDeviceGetCount_v2\0")?;
            let mut count: c_uint = 0;
            (get(&mut count) == NVML_SUCCESS).then_some(count)
        }
    }

    fn compute_capability(&self, device: Device) -> Option<(i32, i32)> {
        // SAFETY: the signature of nvmlDeviceGetCudaComputeCapability; `device` came from NVML.
        unsafe {
            let get = self.symbol::<unsafe extern "C" fn(Device, *mut c_int, *mut c_int) -> c_int>(
                b"nvmlDeviceGetCudaComputeCapability\0",
            )?;
            let (mut major, mut minor) = (0, 0);
            (get(device, &mut major, &mut minor) == NVML_SUCCESS).then_some((major, minor))
        }
    }

    fn fabric(&self, device: Device) -> Option<Fabric> {
        // SAFETY: the signatures of nvmlDeviceGetGpuFabricInfoV and nvmlDeviceGetGpuFabricInfo; the structs are
        // the header's, the v2 one carrying its version word as the call requires.
        unsafe {
            type Get<T> = unsafe extern "C" fn(Device, *mut T) -> c_int;
            if let Some(get) = self.symbol::<Get<FabricInfoV2>>(b"nvmlDeviceGetGpuFabricInfoV\0") {
                let mut info: FabricInfoV2 = std::mem::zeroed();
                info.version = FABRIC_INFO_V2;
                if get(device, &mut info) == NVML_SUCCESS {
                    return Some(Fabric::new(info.state, info.status, info.cluster_uuid, info.clique_id));
                }
            }
            let get = self.symbol::<Get<FabricInfoV1>>(b"nvmlDeviceGetGpuFabricInfo\0")?;
            let mut info: FabricInfoV1 = std::mem::zeroed();
            (get(device, &mut info) == NVML_SUCCESS)
                .then(|| Fabric::new(info.state, info.status, info.cluster_uuid, info.clique_id))
        }
    }
}

/// The compute capability of every GPU NVML lists (all installed GPUs: `CUDA_VISIBLE_DEVICES` does not apply);
/// empty without NVML. Never initialises CUDA.
pub fn compute_capabilities() -> Vec<(i32, i32)> {
    let Some(nvml) = nvml() else {
        return Vec::new();
    };
    let count = nvml.count().unwrap_or(0);
    (0..count).filter_map(|i| nvml.device_by_index(i)).filter_map(|d| nvml.compute_capability(d)).collect()
}

/// The NVLink fabric of the GPU with this UUID (`GPU-...`); `None` without NVML, for an unknown UUID, or where
/// the driver has no fabric query.
pub fn fabric_of(uuid: &str) -> Option<Fabric> {
    let nvml = nvml()?;
    nvml.fabric(nvml.device_by_uuid(uuid)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn the_fabric_structs_match_the_header() {
        assert_eq!(offset_of!(FabricInfoV1, status), 16);
        assert_eq!(offset_of!(FabricInfoV1, clique_id), 20);
        assert_eq!(offset_of!(FabricInfoV1, state), 24);
        assert_eq!(size_of::<FabricInfoV1>(), 28);
        assert_eq!(offset_of!(FabricInfoV2, cluster_uuid), 4);
        assert_eq!(offset_of!(FabricInfoV2, health_mask), 32);
        assert_eq!(FABRIC_INFO_V2, 36 | (2 << 24));
    }

    #[test]
    fn without_nvml_nothing_is_known() {
        if !present() {
            assert!(compute_capabilities().is_empty());
            assert_eq!(fabric_of("GPU-00000000-0000-0000-0000-000000000000"), None);
        }
        assert_eq!(fabric_of("not\0a uuid"), None);
    }
}
