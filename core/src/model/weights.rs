//! The read-only view of a model's weights that verbs compute from, whatever placed them.

use std::path::Path;

/// One tensor's bytes as placed in host memory, little-endian as safetensors stores them.
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    pub name: &'a str,
    /// The element type as safetensors spells it: `F32`, `F16`, `BF16`, `I64`, …
    pub dtype: &'a str,
    pub shape: &'a [usize],
    pub data: &'a [u8],
}

/// Host-resident weights by tensor name, and the folder that holds the model's `config.json`, `tokenizer.json`
/// and sentence-transformers modules.
pub trait Weights: Send + Sync {
    fn tensor(&self, name: &str) -> Option<TensorView<'_>>;
    /// Tensor names in file order.
    fn names(&self) -> Vec<&str>;
    /// The folder beside the weights (the Hugging Face layout), `None` when there is none to read.
    fn directory(&self) -> Option<&Path>;
}
