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
    /// The group (a name or a numeric gid) whose members may join the run; absent: only this process's user.
    pub group: Option<String>,
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

/// Where a model's weights live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Residency {
    /// Memory-mapped host memory, bound to NUMA nodes.
    Ram,
    /// Device memory, one replica per listed device.
    Vram,
}

impl Residency {
    pub fn as_str(self) -> &'static str {
        match self {
            Residency::Ram => "ram",
            Residency::Vram => "vram",
        }
    }
}

/// Where the weights of a RAM model are placed, and which executor's threads read them.
#[derive(Clone, Debug)]
pub struct ModelLoadRamConfig {
    /// The executor whose threads will read the weights; the model borrows it.
    pub executor: crate::Executor,
    /// NUMA node IDs that hold the weights; absent takes the executor's own nodes.
    pub memory_domains: Option<Vec<u32>>,
}

/// Which devices of a VRAM executor receive the weights of a model.
#[derive(Clone, Debug)]
pub struct ModelLoadVramConfig {
    /// A VRAM executor whose streams upload and read the weights; the model borrows it.
    pub executor: crate::Executor,
    /// Device ordinals, a subset of the executor's devices, each receiving every tensor; absent takes all of them.
    pub devices: Option<Vec<u32>>,
}

/// One tensor of a model, as its file describes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorDescription {
    pub name: String,
    /// The element type as safetensors spells it: `F32`, `BF16`, `I64`, …
    pub dtype: String,
    pub shape: Vec<u64>,
    pub bytes: u64,
}

/// What a model reports about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelDescription {
    /// The path the model was loaded from, as given.
    pub path: String,
    /// The weights' file format: `safetensors`.
    pub format: String,
    /// The `model_type` of a `config.json` beside the weights; absent without one.
    pub architecture: Option<String>,
    pub residency: Residency,
    /// NUMA nodes the RAM weights were bound to (empty for VRAM).
    pub memory_domains: Vec<u32>,
    /// Device ordinals holding a replica (empty for RAM).
    pub devices: Vec<u32>,
    /// Bytes of tensor data, summed over every tensor (one replica).
    pub bytes: u64,
    /// Every tensor, in file order (shard by shard for a sharded model).
    pub tensors: Vec<TensorDescription>,
}

/// How [`crate::Model::encode_text`] embeds texts.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct EncodeTextOptions {
    /// Scale each embedding to unit length; absent follows the model's sentence-transformers modules.
    pub normalize: Option<bool>,
    /// Tokens kept per text, longer texts are truncated; absent takes the model's own maximum.
    pub max_tokens: Option<u32>,
}

/// A row-major matrix of `f32`: one row per input, `columns` values each.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct F32Matrix {
    pub data: Vec<f32>,
    pub rows: u32,
    pub columns: u32,
}
