//! Model families, one module per architecture: each reads its weights through [`crate::model::Weights`] and
//! writes its forward pass (and, for training, its backward pass) with [`crate::kernels`]. A family knows no verb:
//! batching, pooling across calls, memory budgets and losses are `crate::verbs`'.

pub mod bert;
pub mod clip;
pub(crate) mod config;
pub mod pixels;
pub(crate) mod tokenize;

pub use config::{Config, Family, Pooling};

/// The verb a family's messages name (the one that prepares it), in each language's spelling.
pub(crate) fn verb() -> impl std::fmt::Display {
    crate::path::name("encode_text")
}
