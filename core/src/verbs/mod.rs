//! What a caller asks of a model: the [`model::Model`] handle, which dispatches to a verb on the architecture its
//! folder describes, and the verbs themselves, functions over the families' types ([`encode`]: `encodeText` and
//! `rerank`; [`image`]: `encodeImage`, and `encodeText` for image-text models; [`train`]: the `Trainer`). A verb
//! checks its input ([`input`]), plans batches within the executor's memory budget, pools, normalises and computes
//! the loss; it is the top of core's compute and nothing below imports it.

pub mod encode;
pub mod image;
pub(crate) mod input;
pub mod model;
pub mod slot;
pub mod train;
