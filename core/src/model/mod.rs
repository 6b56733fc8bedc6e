//! Models: weights placed where an executor's threads or streams read them.
//!
//! An executor owns host threads or device streams and the activation scratch; a model owns weights. A model
//! borrows its executor from load until it is freed or dropped, so [`crate::Executor::free`] under a live model is
//! an in-use error.
//!
//! SKELETON: the loading, validation and placement land with the Models issue; `encode_text` with the encode verb.

mod weights;
pub use weights::{TensorView, Weights};

use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::types::*;

/// Weights placed for an executor. Cloning shares the same model.
#[derive(Clone, Debug)]
pub struct Model {
    executor: Executor,
    /// The BERT encoder the first `encode_text` prepares from the weights (see [`crate::encode`]).
    encoder: std::sync::Arc<crate::encode::EncoderSlot>,
}

impl Model {
    /// Memory-maps safetensors weights read-only and binds them to NUMA nodes for `config.executor`'s threads.
    pub fn load_ram(path: &str, config: ModelLoadRamConfig) -> Result<Model> {
        let _ = (path, config);
        Err(Error::unsupported("`Model.loadRam` is not implemented yet"))
    }

    /// Uploads safetensors weights to every listed device of `config.executor`, on its streams.
    pub fn load_vram(path: &str, config: ModelLoadVramConfig) -> Result<Model> {
        let _ = (path, config);
        Err(Error::unsupported("`Model.loadVram` is not implemented yet"))
    }

    /// Reports the model's file, architecture, residency and tensors.
    pub fn describe(&self) -> Result<ModelDescription> {
        Err(Error::unsupported("`Model.describe` is not implemented yet"))
    }

    /// Embeds `texts`, one row per text in input order, on the executor's threads.
    pub fn encode_text(&self, texts: &[String], options: EncodeTextOptions) -> Result<F32Matrix> {
        crate::encode::encode_text(&self.encoder, self.weights()?, &self.executor, texts, &options)
    }

    /// The placed weights. SKELETON: the loader (Models issue) replaces this with its own weights.
    fn weights(&self) -> Result<&dyn Weights> {
        Err(Error::unsupported("`Model.encodeText` needs loaded weights; loading is not implemented yet"))
    }

    /// Whether `free` has run: every later call but `free` fails as freed.
    pub fn is_freed(&self) -> bool {
        false
    }

    /// Releases the weights and returns the executor's borrow; a second call does nothing.
    pub fn free(&self) -> Result<()> {
        Ok(())
    }
}
