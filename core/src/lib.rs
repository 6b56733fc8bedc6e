//! The UForm runtime. All behaviour lives here, once; every language binding is a mechanical conversion of this
//! crate's public API, whose shape follows `idl/uform.yaml`.
//!
//! The layers, each importing only those below it (a lower one never names a higher):
//!
//! - [`verbs`]: what a caller asks of a model: the [`Model`] handle, which dispatches each verb on the model's
//!   architecture, and the verbs themselves ([`verbs::encode`]: `encodeText` and `rerank` on a BERT-family
//!   encoder; [`verbs::image`]: `encodeImage`, and `encodeText` on CLIP or SigLIP; [`verbs::train`]: the
//!   [`Trainer`]). A verb checks its input, plans batches within the executor's memory, pools, normalises and
//!   computes the loss.
//! - [`families`]: one module per architecture ([`families::bert`], [`families::clip`]), each a forward pass (and
//!   BERT's training pass) over the kernels, up to its token vectors or its towers' embeddings; which family runs a
//!   model is decided once, when its folder is described ([`families::Architecture`]).
//! - [`kernels`]: GEMM, attention and the row-wise steps per CPU class (one file per instruction set).
//! - [`model`]: safetensors weights placed for an executor, in RAM or VRAM, and their values decoded to f32.
//! - [`mesh`] and [`collective`]: the processes of one run meeting through a shared directory, and what they
//!   compute together.
//! - [`executor`]: NUMA-placed host thread pools and per-device streams; [`capabilities`]: CPU classes and the
//!   capability strings; [`devices`]: GPU discovery (NVIDIA through cudarc, AMD through the HIP runtime, both
//!   loaded at run time).
//! - [`handle`], [`error`], [`path`], [`types`]: lifecycles, the one error model, the argument paths messages
//!   name, and the IDL's records (generated).

pub mod capabilities;
pub mod collective;
pub mod devices;
pub mod error;
pub mod executor;
pub mod families;
pub mod handle;
pub mod kernels;
pub mod mesh;
pub mod model;
pub mod path;
pub mod types;
pub mod verbs;

pub use capabilities::{capabilities_available, capabilities_compiled};
pub use devices::{gpu_class_name, gpu_devices};
pub use error::{Error, ErrorKind, Result};
pub use executor::Executor;
pub use mesh::{mesh_options_from_environment, Mesh};
pub use types::*;
pub use verbs::model::Model;
pub use verbs::train::Trainer;
