//! Weights placed where an executor's threads or streams read them, whatever the architecture: the model layer
//! of core's compute. The [`crate::Model`] handle that loads them and dispatches to a verb is in `crate::verbs`.
//!
//! An executor owns host threads or device streams and the activation scratch; a model owns weights. A model
//! borrows its executor from load until it is freed or dropped, so [`crate::Executor::free`] under a live model is
//! an in-use error ("1 mesh or model still borrows it"); an executor freed first cannot lend itself to a new model.
//!
//! # Paths
//!
//! `path` names a `.safetensors` file, a sharded model's `model.safetensors.index.json`, or a directory holding
//! either (the Hugging Face layout: the index wins, then `model.safetensors`, then the directory's only
//! `.safetensors` file; a directory with none of them whose `modules.json` puts the Transformer module in a folder
//! of its own, like `0_Transformer/`, is looked in there). The architecture is the `model_type` of a `config.json`
//! beside the weights. A `path` that is no file or folder here but a Hugging Face Hub name (`org/name`) loads the
//! snapshot of its revision from the Hub cache that `huggingface_hub` and sentence-transformers fill (`hub.rs`).
//!
//! # Checks
//!
//! Every file is checked to be a regular file before it is opened (a FIFO or a device is an invalid argument and
//! never blocks), read into memory the process owns, and its header checked before a byte of tensor data is touched (see
//! `header.rs`): a header length past the file or over 100 MB, malformed JSON, an unknown dtype, a shape whose
//! size disagrees with its offsets, offsets outside the data, overlapping or leaving holes, an index naming a
//! missing shard or a tensor its shard lacks, a directory without weights, an empty file. Each is an
//! invalid-argument error naming the file and, where there is one, the tensor. A file that cannot be read is an I/O
//! error naming it.
//!
//! # Residency
//!
//! RAM: each shard is read once, at load, into anonymous memory bound through hwloc to `memoryDomains` (or the
//! executor's own NUMA nodes when absent) before it is filled, then made read-only; `describe().memoryDomains`
//! says where it was bound (a one-node machine needs no binding and reports its node; when the OS refuses, the
//! list is empty and `Model.placement_fallback` says why). The file is never mapped: truncating, rewriting or
//! deleting it after `load_ram` returns changes nothing the model reads (the encoder, prepared lazily by the first
//! encode, reads this memory too). The cost is the file's size in anonymous resident memory from the load on,
//! where a mapping would have held the same pages as page cache once the first encode read them. Freeing the
//! model frees the shards.
//!
//! VRAM: each tensor is copied to every listed device on the executor's stream for that device, into one buffer per
//! shard; the host copy is freed once the copies finish. Without a GPU driver the call is unavailable; a RAM
//! executor or an ordinal the executor does not drive is an invalid argument.

pub mod dtype;
pub(crate) mod file;
pub mod header;
pub(crate) mod hub;
pub mod layout;
pub(crate) mod ram;
pub(crate) mod source;
pub(crate) mod vram;
mod weights;
pub use ram::RamWeights;
pub use weights::{TensorView, Weights};
