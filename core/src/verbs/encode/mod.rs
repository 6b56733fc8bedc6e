//! The `encodeText` verb: text encoding with BERT-family models on an executor's threads.
//!
//! An [`Encoder`] is prepared once per model from its [`Weights`] (the first encode does it; the model keeps it):
//! the folder's `config.json`, `tokenizer.json` and sentence-transformers modules are read, and every layer's
//! weights, whatever their element type (F32, F16 or BF16), are converted to the model's precision (f32, or bf16
//! rounded to nearest even) and packed for the matrix kernels, query, key and value fused; the embedding tables
//! are kept at that precision too, the vectors in f32. [`Encoder::encode`] then tokenises (on the executor's threads), runs the layers with
//! the kernels of the executor's CPU class in the executor's scratch, pools and normalises:
//!
//! - Memory: a call of any size is cut into batches whose scratch fits the executor's `scratchLimit` (see
//!   `batch.rs`: longest texts first, rows back in input order, results identical to smaller calls); a text that
//!   alone cannot fit is an out-of-memory error naming it. Beyond the scratch, a call holds its result (4 bytes per
//!   text per dimension) and the tokens of about one batch; a result that cannot be allocated is out of memory too.
//! - Long texts are tokenised from a prefix of a few bytes per kept token, not whole (see `families/tokenize.rs`).
//! - Tokens per text: `options.max_tokens`, else `max_seq_length` from `sentence_bert_config.json`, else the
//!   position embeddings, special tokens included, as sentence-transformers truncates. Below the special tokens'
//!   count (2 for BERT), the first `max_tokens` of `[CLS] [SEP]` are kept.
//! - Pooling from `1_Pooling/config.json` (mean or CLS; no `modules.json` means mean); normalisation when
//!   `options.normalize` says so, else when `modules.json` lists a `Normalize` module. The files are found and
//!   checked as `model/layout.rs` says (the Transformer module's `path` honoured, every side file a regular file
//!   under a size cap, module paths inside the folder).
//! - A text the tokenizer gives no tokens (only a tokenizer without special tokens does, for an empty text) is a
//!   row of zeros: it never reaches the forward pass.
//! - Errors: a model that is neither BERT nor DistilBERT, other pooling modes or modules: unsupported, naming what
//!   was found; a text with a NUL character or a `max_tokens` outside `1..=max_position_embeddings`: invalid
//!   argument.

mod batch;

use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::families::bert::{forward, Encoder};
use crate::families::tokenize::Tokens;
use crate::kernels::Kernels;
use crate::model::Weights;
use crate::types::{EncodeTextOptions, F32Matrix, Precision};
use std::sync::{Arc, Mutex};

impl Encoder {
    /// Embeds `texts` with the same `weights` it was prepared from, on `executor`'s threads.
    pub fn encode(&self, executor: &Executor, texts: &[String], options: &EncodeTextOptions) -> Result<F32Matrix> {
        let max_tokens = match options.max_tokens {
            None => self.config.max_tokens,
            Some(m) if m >= 1 && m as usize <= self.config.positions => m as usize,
            Some(m) => {
                return Err(Error::invalid_argument(
                    "options.max_tokens",
                    format!(
                        "must be between 1 and {} (the model's position embeddings), got {m}",
                        self.config.positions
                    ),
                ))
            }
        };
        if let Some((i, at)) = texts.iter().enumerate().find_map(|(i, t)| t.find('\0').map(|at| (i, at))) {
            return Err(Error::invalid_argument(
                &format!("texts[{i}]"),
                format!("contains a NUL character at byte {at}"),
            ));
        }
        let kernels = Kernels::for_class(executor.cpu_class())?;
        let h = self.config.hidden;
        if texts.is_empty() {
            return Ok(F32Matrix { data: Vec::new(), rows: 0, columns: h as u32 });
        }
        let rows = u32::try_from(texts.len())
            .map_err(|_| Error::invalid_argument("texts", format!("holds {} texts, over 2^32 - 1", texts.len())))?;
        let mut data = batch::output(texts.len(), h)?;
        let normalize = options.normalize.unwrap_or(self.config.normalize);
        let mut scratch = executor.host_scratch()?;
        let planner = batch::Planner::new(&self.config, executor.threads(), scratch.limit());

        // Longest first by bytes; tokenised a chunk at a time into `pending`, which holds about one batch.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let chunk = (8 * executor.threads()).max(64);
        let (mut next, mut pending, mut pending_tokens) = (0, Vec::<(usize, Tokens)>::new(), 0);
        while next < order.len() || !pending.is_empty() {
            while next < order.len() && pending_tokens < planner.capacity() {
                let which = &order[next..(next + chunk).min(order.len())];
                let tokens = self.tokenizers.encode(executor, texts, which, max_tokens)?;
                next += which.len();
                // A text without tokens (a tokenizer that adds no special tokens, given an empty text) keeps its
                // row of zeros: there is nothing to pool.
                for (i, t) in which.iter().zip(tokens).filter(|(_, t)| !t.ids.is_empty()) {
                    pending_tokens += t.ids.len();
                    pending.push((*i, t));
                }
            }
            pending.sort_by(|a, b| b.1.ids.len().cmp(&a.1.ids.len()).then(a.0.cmp(&b.0)));
            let lens: Vec<usize> = pending.iter().map(|(_, t)| t.ids.len()).collect();
            let plan = match planner.next(&lens) {
                Ok(Some(plan)) => plan,
                Ok(None) => break,
                Err(bytes) => return Err(planner.too_long(pending[0].0, lens[0], bytes)),
            };
            let (rows_out, tokens): (Vec<usize>, Vec<Tokens>) = pending.drain(..plan.texts).unzip();
            pending_tokens -= tokens.iter().map(|t| t.ids.len()).sum::<usize>();
            forward::forward(
                executor,
                &kernels,
                &self.config,
                &self.params,
                &tokens,
                &rows_out,
                plan.slots,
                normalize,
                &mut data,
                &mut scratch,
            )?;
        }
        Ok(F32Matrix { data, rows, columns: h as u32 })
    }
}
/// The name of the kernels `cpu_class` selects (`None`: this CPU's native class): `avx512`, `avx2` or `portable`.
pub fn kernels_for(cpu_class: Option<&str>) -> Result<&'static str> {
    Kernels::for_class(cpu_class).map(|k| k.name)
}

/// Where a model keeps its encoder: prepared by the first encode at the model's precision, shared by later ones.
pub struct EncoderSlot(Mutex<Option<Arc<Encoder>>>, Precision);

impl std::fmt::Debug for EncoderSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EncoderSlot")
    }
}

impl EncoderSlot {
    /// An empty slot whose encoder will keep its weights at `precision`.
    pub fn new(precision: Precision) -> EncoderSlot {
        EncoderSlot(Mutex::new(None), precision)
    }

    /// The precision the encoder's weights are kept at.
    pub fn precision(&self) -> Precision {
        self.1
    }

    /// The prepared encoder, preparing it from `weights` on first use (a failure is not kept: the next call
    /// tries again).
    pub fn get_or_prepare(&self, weights: &dyn Weights) -> Result<Arc<Encoder>> {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(encoder) = &*slot {
            return Ok(encoder.clone());
        }
        let encoder = Arc::new(Encoder::prepare(weights, self.1)?);
        *slot = Some(encoder.clone());
        Ok(encoder)
    }

    /// Replaces the prepared encoder: a trainer's new weights. Encodes already running keep the one they took.
    pub(crate) fn publish(&self, encoder: Arc<Encoder>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(encoder);
    }

    /// Drops the prepared encoder (when the model frees its weights).
    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// `Model.encodeText`: prepares the encoder once, then embeds `texts`.
pub fn encode_text(
    slot: &EncoderSlot,
    weights: &dyn Weights,
    executor: &Executor,
    texts: &[String],
    options: &EncodeTextOptions,
) -> Result<F32Matrix> {
    slot.get_or_prepare(weights)?.encode(executor, texts, options)
}
