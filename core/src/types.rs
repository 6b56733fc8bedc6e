//! The records and enums of the IDL, as plain Rust values. Every binding converts to and from these.

/// How a mesh's NVLink domains reduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MultimemTier {
    /// Every GPU of every domain supports NVLink multicast: reductions happen in the switch.
    SwitchReduced,
    /// Some GPU lacks multicast: peers read each other's memory.
    PeerRead,
}

impl MultimemTier {
    pub fn as_str(self) -> &'static str {
        match self {
            MultimemTier::SwitchReduced => "switch-reduced",
            MultimemTier::PeerRead => "peer-read",
        }
    }
}

/// The runtime that drives a GPU, numbered as `uform_gpu_vendor_t` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum GpuVendor {
    #[default]
    Unknown = 0,
    Nvidia = 1,
    Amd = 2,
    Apple = 3,
}

/// What the threads or streams of an executor do once they go idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Mood {
    /// Idle threads block in the OS and consume no CPU; the next dispatch wakes them.
    #[default]
    Parked,
    /// Idle threads busy-wait with a pause hint, for the lowest dispatch latency.
    Spinning,
}

/// One GPU this process can drive.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct GpuDevice {
    pub vendor: GpuVendor,
    pub vendor_ordinal: u32,
    /// The class name ("nvidia-hopper"), `None` when the tables do not know the device.
    pub gpu_class: Option<String>,
    pub compute_units: u32,
    pub memory_bytes: u64,
    pub name: String,
}

/// Where the host threads of a RAM executor are placed, how many there are, and how many deferred calls it tracks.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExecutorForRamConfig {
    pub memory_domains: Option<Vec<u32>>,
    pub cpu_class: Option<String>,
    pub threads: Option<u32>,
    pub deferred_limit: Option<u32>,
}

/// Where the borrowed pool of a RAM executor is placed, and how many deferred calls it tracks.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExecutorOnPoolConfig {
    pub memory_domains: Option<Vec<u32>>,
    pub cpu_class: Option<String>,
    pub deferred_limit: Option<u32>,
}

/// Which devices a VRAM executor drives, and on which streams.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExecutorForVramConfig {
    pub devices: Option<Vec<u32>>,
    pub gpu_class: Option<String>,
    pub memory_domains: Option<Vec<u32>>,
    pub cpu_class: Option<String>,
    pub streams: Option<Vec<u64>>,
    pub scratch_limit: Option<u64>,
    pub deferred_limit: Option<u32>,
}

/// Where this process sits among the processes training one model, and how they meet.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MeshOptions {
    pub host_domain_index: Option<u32>,
    pub host_domain_count: Option<u32>,
    pub gpus_per_multimem_domain: Option<u32>,
    pub directory: Option<String>,
    pub job: Option<String>,
    pub timeout_seconds: Option<u32>,
}

/// What a mesh reports about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshDescription {
    pub host_domain_index: u32,
    pub host_domain_count: u32,
    /// This host's GPUs that are members of the mesh (empty for a RAM executor).
    pub gpus: Vec<GpuDevice>,
    pub gpus_per_multimem_domain: u32,
    pub multimem_domain_count: u32,
    pub multimem_tier: MultimemTier,
}
