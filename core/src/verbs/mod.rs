//! What a caller asks of a model: the [`model::Model`] handle, which dispatches to a verb, and the verbs themselves
//! ([`encode`]: `encodeText` and `rerank`; [`image`]: `encodeImage`, and `encodeText` for image-text models; [`train`]: the `Trainer`). A verb picks a family, plans batches within the executor's
//! memory budget, pools and computes the loss; it is the top of core's compute and nothing below imports it.

pub mod encode;
pub mod image;
pub mod model;
pub mod slot;
pub mod train;
