//! The `encodeText` verb: text encoding with BERT-family models on an executor's threads.
//!
//! A [`crate::families::bert::Encoder`] is prepared once per model from its [`Weights`] (the first encode does it;
//! the model keeps it):
//! the folder's `config.json`, `tokenizer.json` and sentence-transformers modules are read, and every layer's
//! weights, whatever their element type (F32, F16 or BF16), are converted to the model's precision (f32, or bf16
//! rounded to nearest even) and packed for the matrix kernels, query, key and value fused; the embedding tables
//! are kept at that precision too, the vectors in f32. [`embed`] then tokenises (on the executor's threads), runs
//! the layers with the kernels of the executor's CPU class in the executor's scratch, and pools and normalises
//! ([`pool`]):
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
pub(crate) mod pool;

pub(crate) use batch::output;

use super::input::{check_nul, columns, max_tokens};
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::families::bert::{forward, Encoder, Pooling, ScoreActivation};
use crate::families::tokenize::Tokens;
use crate::kernels::Kernels;
use crate::model::Weights;
use crate::types::{EncodeTextOptions, F32Matrix, Precision, RerankOptions, RerankScore};

/// The prompt `options` asks of `encoder`: `prompt` as given, `prompt_name` from the model's prompts, else the
/// model's default prompt, else none.
fn prompt<'a>(encoder: &'a Encoder, options: &'a EncodeTextOptions) -> Result<Option<&'a str>> {
    let config = encoder.config();
    let named = |name: &str| config.prompts.iter().find(|(n, _)| n == name).map(|(_, text)| text.as_str());
    let prompt = match (&options.prompt, &options.prompt_name) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid_argument(
                "options.prompt",
                format!("and {} cannot both be given", crate::path::name("options.prompt_name")),
            ))
        }
        (Some(prompt), None) => Some(prompt.as_str()),
        (None, Some(name)) => Some(named(name).ok_or_else(|| {
            let known: Vec<&str> = config.prompts.iter().map(|(n, _)| n.as_str()).collect();
            Error::invalid_argument(
                "options.prompt_name",
                format!("names {name:?}, which the model's prompts lack; it has {known:?}"),
            )
        })?),
        (None, None) => config.default_prompt.as_deref().and_then(named),
    };
    let prompt = prompt.filter(|p| !p.is_empty());
    if prompt.is_some() && !config.include_prompt {
        return Err(Error::unsupported(format!(
            "{} pools the prompt's tokens with the text's; this model's pooling leaves them out (include_prompt: \
             false)",
            crate::families::verb()
        )));
    }
    Ok(prompt)
}

/// `Model.encodeText` on a prepared encoder: embeds `texts` with the weights it was prepared from, on `executor`'s
/// threads.
pub fn embed(
    encoder: &Encoder,
    executor: &Executor,
    texts: &[String],
    options: &EncodeTextOptions,
) -> Result<F32Matrix> {
    let config = encoder.config();
    let max_tokens = max_tokens("options.max_tokens", options.max_tokens, config.max_tokens, config.positions)?;
    check_nul(texts.iter().map(String::as_str), |i| format!("texts[{i}]"))?;
    let prompt = prompt(encoder, options)?;
    check_nul(prompt, |_| "options.prompt".to_string())?;
    let h = config.hidden;
    let columns = columns(options.dimensions, h)?;
    let normalize = options.normalize.unwrap_or(config.normalize);
    let tokenizers = encoder.tokenizers();
    let tokenize = |which: &[usize]| match prompt {
        None => tokenizers.encode(executor, texts, which, max_tokens),
        Some(prompt) => {
            let prompted: Vec<String> = which.iter().map(|&i| format!("{prompt}{}", texts[i])).collect();
            let all: Vec<usize> = (0..which.len()).collect();
            tokenizers.encode_named(executor, &prompted, &all, max_tokens, &|j| format!("texts[{}]", which[j]))
        }
    };
    // Truncated embeddings are normalised after the cut, as a Matryoshka model's are compared.
    let kernels = Kernels::for_class(executor.cpu_class())?;
    let mut data = rows(encoder, executor, &kernels, config.pooling, texts, &tokenize, normalize && columns == h)?;
    if columns < h {
        data = truncate(&kernels, &data, h, columns, normalize)?;
    }
    let rows = u32::try_from(texts.len()).expect("checked by rows()");
    Ok(F32Matrix { data, rows, columns: columns as u32 })
}

/// `Model.rerank` on a prepared encoder: scores `documents` against `query` with the model's classification head,
/// one score per document, in input order, or best first when `options.sorted`.
pub fn score(
    encoder: &Encoder,
    executor: &Executor,
    query: &str,
    documents: &[String],
    options: &RerankOptions,
) -> Result<Vec<RerankScore>> {
    let config = encoder.config();
    let (Some(head), Some(activation)) = (&encoder.params().head, config.classifier) else {
        return Err(Error::unsupported(format!(
            "{} needs a cross-encoder (a *ForSequenceClassification checkpoint with one label); this model has no \
             classification head",
            crate::path::name("Model.rerank")
        )));
    };
    if query.is_empty() {
        return Err(Error::invalid_argument("query", "is empty".to_string()));
    }
    if documents.is_empty() {
        return Err(Error::invalid_argument("documents", "is empty: give at least one document".to_string()));
    }
    check_nul([query], |_| "query".to_string())?;
    check_nul(documents.iter().map(String::as_str), |i| format!("documents[{i}]"))?;
    let max_tokens = max_tokens("options.max_tokens", options.max_tokens, config.max_tokens, config.positions)?;
    let tokenize = |which: &[usize]| encoder.tokenizers().encode_pairs(executor, query, documents, which, max_tokens);
    // The head reads the first token's vector as it comes out of the last layer (or ModernBERT's mean of them).
    let kernels = Kernels::for_class(executor.cpu_class())?;
    let rows = rows(encoder, executor, &kernels, head.pooling, documents, &tokenize, false)?;
    let h = config.hidden;
    let mut scores: Vec<RerankScore> = rows
        .chunks_exact(h)
        .enumerate()
        .map(|(index, x)| {
            let logit = head.logit(x) as f64;
            let score = match activation {
                ScoreActivation::Sigmoid => 1.0 / (1.0 + (-logit).exp()),
                ScoreActivation::Identity => logit,
            };
            RerankScore { index: index as u32, score }
        })
        .collect();
    if options.sorted.unwrap_or(RerankOptions::DEFAULT_SORTED) {
        scores.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    }
    Ok(scores)
}

/// Runs the layers over every input (`inputs[i]`'s bytes order them, longest first), tokenised a chunk at a time by
/// `tokenize` (given the inputs' indices), pooled by `pooling`, into one row each in input order.
fn rows(
    encoder: &Encoder,
    executor: &Executor,
    kernels: &Kernels,
    pooling: Pooling,
    inputs: &[String],
    tokenize: &dyn Fn(&[usize]) -> Result<Vec<Tokens>>,
    normalize: bool,
) -> Result<Vec<f32>> {
    let config = encoder.config();
    let h = config.hidden;
    super::input::rows("texts", inputs.len(), "texts")?;
    let mut data = batch::output(inputs.len(), h)?;
    if inputs.is_empty() {
        return Ok(data);
    }
    let mut scratch = executor.host_scratch()?;
    let planner = batch::Planner::new(config, executor.threads(), scratch.limit());

    // Longest first by bytes; tokenised a chunk at a time into `pending`, which holds about one batch.
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(inputs[i].len()));
    let chunk = (8 * executor.threads()).max(64);
    let (mut next, mut pending, mut pending_tokens) = (0, Vec::<(usize, Tokens)>::new(), 0);
    while next < order.len() || !pending.is_empty() {
        while next < order.len() && pending_tokens < planner.capacity() {
            let which = &order[next..(next + chunk).min(order.len())];
            let tokens = tokenize(which)?;
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
        let params = encoder.params();
        let (hidden, spans) = forward::forward(executor, kernels, config, params, &tokens, plan.slots, &mut scratch)?;
        pool::pool(executor, kernels, pooling, (hidden, h), &spans, &rows_out, normalize, &mut data)?;
    }
    Ok(data)
}

/// The first `columns` of each row of `h`, scaled to unit length when `normalize` (a zero row stays zero).
pub(crate) fn truncate(kernels: &Kernels, data: &[f32], h: usize, columns: usize, normalize: bool) -> Result<Vec<f32>> {
    let mut out = batch::output(data.len() / h, columns)?;
    for (row, kept) in data.chunks_exact(h).zip(out.chunks_exact_mut(columns)) {
        kept.copy_from_slice(&row[..columns]);
        if normalize {
            kernels.normalize(kept);
        }
    }
    Ok(out)
}

/// The name of the kernels `cpu_class` selects (`None`: this CPU's native class): `avx512`, `avx2` or `portable`.
pub fn kernels_for(cpu_class: Option<&str>) -> Result<&'static str> {
    Kernels::for_class(cpu_class).map(|k| k.name)
}

/// Where a model keeps its encoder: prepared by the first encode at the model's precision, shared by later ones.
pub type EncoderSlot = super::slot::Slot<Encoder>;

impl super::slot::Prepare for Encoder {
    fn prepare(weights: &dyn Weights, precision: Precision) -> Result<Encoder> {
        Encoder::prepare(weights, precision)
    }
}

/// `Model.rerank`: prepares the encoder once, then scores `documents` against `query`.
pub fn rerank(
    slot: &EncoderSlot,
    weights: &dyn Weights,
    executor: &Executor,
    query: &str,
    documents: &[String],
    options: &RerankOptions,
) -> Result<Vec<RerankScore>> {
    score(&*slot.get_or_prepare(weights)?, executor, query, documents, options)
}

/// `Model.encodeText`: prepares the encoder once, then embeds `texts`.
pub fn encode_text(
    slot: &EncoderSlot,
    weights: &dyn Weights,
    executor: &Executor,
    texts: &[String],
    options: &EncodeTextOptions,
) -> Result<F32Matrix> {
    embed(&*slot.get_or_prepare(weights)?, executor, texts, options)
}
