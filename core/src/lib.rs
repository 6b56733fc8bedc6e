//! The UForm runtime. All behaviour lives here, once; every language binding is a mechanical conversion of this
//! crate's public API, whose shape follows `idl/uform.yaml`.
//!
//! - [`capabilities`]: CPU classes and the capability strings.
//! - [`devices`]: GPU discovery (NVIDIA through cudarc, AMD through the HIP runtime, both loaded at run time).
//! - [`executor`]: NUMA-placed host thread pools and per-device streams.
//! - [`mesh`]: the processes of one run meeting through a shared directory.
//! - [`encode`]: BERT text encoding on an executor's threads, the compute behind `Model.encodeText`.
//! - [`model`]: safetensors weights placed for an executor, and the verbs that run on them.
//! - [`train`]: fine-tuning a RAM model's encoder (the `Trainer`).

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
