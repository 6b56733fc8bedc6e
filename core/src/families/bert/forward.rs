//! The BERT forward pass over a batch: every text's tokens side by side in one `[tokens × hidden]` matrix for the
//! dense layers (no padding), attention per (text, head), then pooling and normalisation.
//!
//! A batch's scratch is [`scratch_lens`]: per token, the hidden state, the wider of the fused QKV and the
//! intermediate activations, and the attention context; per attention slot (a thread doing attention), a block of
//! [`QUERY_BLOCK`] rows of scores and the packed keys and values of the batch's longest text: linear in its length. `super::batch` sizes batches with it.

use super::params::{Params, Table};
use crate::error::{Error, Result};
use crate::executor::{Executor, Scratch};
use crate::families::tokenize::Tokens;
use crate::families::{Config, Pooling};
use crate::kernels::gemm::{self, dense, dense_strided, packed_len, Epilogue, Shared};
use crate::kernels::{Kernels, Lhs};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Query rows whose scores a thread holds at once: a text of `len` tokens takes `QUERY_BLOCK × len` floats of
/// scores, not `len × len`, so that an 8,192-token ModernBERT text needs 1 MiB of scores a thread, not 256 MiB. Each
/// block's rows are softmaxed and multiplied by the values on their own (a row's softmax needs only its own scores),
/// giving the same floats as one block of every row.
const QUERY_BLOCK: usize = 32;

/// Floats of attention scratch one thread needs for a text of `len` tokens with heads `dh` wide: a block of its
/// scores, its packed keys and values.
pub(crate) fn attention_floats(dh: usize, len: usize) -> usize {
    len.min(QUERY_BLOCK) * len + packed_len(len, dh) + packed_len(dh, len)
}

/// The floats of each scratch buffer a batch of `total` tokens takes whose longest text has `longest` tokens, with
/// `slots` threads doing attention.
pub fn scratch_lens(config: &Config, total: usize, longest: usize, slots: usize) -> [usize; 4] {
    let (h, wide) = (config.hidden, (3 * config.hidden).max(config.intermediate));
    let at = |n: usize, m: usize| n.saturating_mul(m);
    [at(total, h), at(total, wide), at(total, h), at(slots, attention_floats(config.head_dim(), longest))]
}

/// Runs the encoder over `tokens` and writes one pooled (and, when asked, normalised) row per text into `pooled`:
/// text `i`'s at row `rows[i]`. `slots` threads (at least 1) do attention, each with its own part of the scratch.
#[allow(clippy::too_many_arguments)]
pub fn forward(
    executor: &Executor,
    kernels: &Kernels,
    config: &Config,
    params: &Params,
    tokens: &[Tokens],
    rows_out: &[usize],
    slots: usize,
    normalize: bool,
    pooled: &mut [f32],
    scratch: &mut Scratch,
) -> Result<()> {
    let h = config.hidden;
    assert_eq!(tokens.len(), rows_out.len(), "forward: one output row per text");
    assert!(rows_out.iter().all(|r| (r + 1) * h <= pooled.len()), "forward: an output row past the matrix");
    let mut spans: Vec<Range<usize>> = Vec::with_capacity(tokens.len());
    let mut total = 0;
    for t in tokens {
        spans.push(total..total + t.ids.len());
        total += t.ids.len();
    }
    let longest = tokens.iter().map(|t| t.ids.len()).max().unwrap_or(0);
    for (i, t) in tokens.iter().enumerate() {
        if t.ids.is_empty() || t.ids.len() != t.type_ids.len() {
            return Err(Error::internal(format!("texts[{}] reached the encoder with no tokens", rows_out[i])));
        }
        if let Some(id) = t.ids.iter().find(|id| **id as usize >= config.vocab) {
            return Err(Error::unsupported(format!(
                "the tokenizer gave `texts[{i}]` token {id}, past the {} word embeddings",
                config.vocab
            )));
        }
        // A family without token type embeddings (DistilBERT, MPNet, ModernBERT) ignores the types a pair's
        // template gives, as transformers does.
        let typed = !matches!(params.token_type, Table::Zero);
        if let Some(ty) = t.type_ids.iter().find(|ty| typed && **ty as usize >= config.type_vocab) {
            return Err(Error::unsupported(format!("the tokenizer gave `texts[{i}]` token type {ty}")));
        }
    }
    let slots = slots.clamp(1, executor.threads());
    let per_thread = attention_floats(config.head_dim(), longest);
    let [x, big, ctx, attn] = scratch.carve(scratch_lens(config, total, longest, slots));

    // Embeddings: word + position + token type, then LayerNorm.
    let rows = Shared(x.as_mut_ptr());
    executor.for_n_dynamic(tokens.len(), |text| {
        #[allow(clippy::redundant_locals)] // captures the Send wrapper whole, not its raw pointer field
        let rows = rows;
        for (p, t) in spans[text].clone().enumerate() {
            // SAFETY: row `t` belongs to this text's span alone.
            let row = unsafe { std::slice::from_raw_parts_mut(rows.0.add(t * h), h) };
            params.embed(tokens[text].ids[p] as usize, p, tokens[text].type_ids[p] as usize, row);
            kernels.layer_norm(row, &params.embedding_ln.0, &params.embedding_ln.1, config.layer_norm_eps);
        }
    })?;

    // Residual and LayerNorm after a projection: finished by the projection's own tiles (no dispatch of their own).
    fn add_norm<'a>(bias: &'a [f32], (gamma, beta): &'a (Vec<f32>, Vec<f32>), eps: f32) -> Epilogue<'a> {
        Epilogue::AddBiasLayerNorm { bias, gamma, beta, eps }
    }
    let eps = config.layer_norm_eps;
    // Five fork-joins a layer: the QKV projection, attention, the output projection (with its residual and
    // LayerNorm), the up projection (with GELU) and the down projection (with its residual and LayerNorm).
    let layers = if config.modern.is_some() { &params.layers[..0] } else { &params.layers[..] };
    for layer in layers {
        let qkv = &mut big[..total * 3 * h];
        dense(executor, kernels, x, total, &layer.qkv, qkv, Epilogue::Bias(&layer.qkv_bias))?;
        let relative = params.relative_bias.as_deref().zip(config.relative_buckets);
        let shape = (h, config.heads);
        attention(executor, kernels, shape, relative, qkv, ctx, &spans, attn, per_thread, slots, Mask::All)?;
        dense(executor, kernels, ctx, total, &layer.out, x, add_norm(&layer.out_bias, &layer.ln1, eps))?;
        let up = &mut big[..total * config.intermediate];
        dense(executor, kernels, x, total, &layer.up, up, Epilogue::BiasGelu(&layer.up_bias))?;
        dense(executor, kernels, up, total, &layer.down, x, add_norm(&layer.down_bias, &layer.ln2, eps))?;
    }

    if let Some(modern) = &config.modern {
        let scratch = (&mut *big, &mut *ctx, &mut *attn);
        modern_layers(executor, kernels, config, modern, params, &spans, x, scratch, per_thread, slots)?;
    }

    let out = Shared(pooled.as_mut_ptr());
    let x = &*x;
    executor.for_n(tokens.len(), |text| {
        #[allow(clippy::redundant_locals)] // captures the Send wrapper whole, not its raw pointer field
        let out = out;
        // SAFETY: row `rows_out[text]` is inside `pooled` (asserted above) and this task's alone: the batch names
        // each output row once.
        let row = unsafe { std::slice::from_raw_parts_mut(out.0.add(rows_out[text] * h), h) };
        let span = spans[text].clone();
        match config.pooling {
            Pooling::Cls => row.copy_from_slice(&x[span.start * h..span.start * h + h]),
            Pooling::Mean => {
                row.fill(0.0);
                for t in span.clone() {
                    kernels.add(row, &x[t * h..t * h + h]);
                }
                kernels.scale(row, 1.0 / span.len().max(1) as f32);
            }
        }
        if normalize {
            let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
            // sentence-transformers divides by max(‖v‖, 1e-12).
            kernels.scale(row, 1.0 / norm.max(1e-12));
        }
    })
}

/// ModernBERT's layers over `x` (the normalised embeddings): per layer, `x += Wo · attention(rotary(Wqkv ·
/// norm(x)))` with a sliding window in its local layers, then `x += Wo' · (gelu(input) · gate)` of `Wi · norm(x)`;
/// the final norm after the last. Scratch: `big` holds QKV then the gated GELU's input and gate, `ctx` the normed
/// rows then attention's output.
#[allow(clippy::too_many_arguments)]
fn modern_layers(
    executor: &Executor,
    kernels: &Kernels,
    config: &Config,
    modern: &crate::families::config::Modern,
    params: &Params,
    spans: &[Range<usize>],
    x: &mut [f32],
    (big, ctx, attn): (&mut [f32], &mut [f32], &mut [f32]),
    per_thread: usize,
    slots: usize,
) -> Result<()> {
    let (h, wide, eps) = (config.hidden, config.intermediate, config.layer_norm_eps);
    let total = spans.last().map_or(0, |s| s.end);
    let (x, ctx) = (&mut x[..total * h], &mut ctx[..total * h]);
    let zeros = vec![0.0; wide / 2];
    // `to[t] = norm(from[t])` for every token, or a copy where the layer has no norm (layer 0's attention).
    let normed = |from: &[f32], to: &mut [f32], (gamma, beta): &(Vec<f32>, Vec<f32>)| -> Result<()> {
        let to = Shared(to.as_mut_ptr());
        executor.for_n_dynamic(total, |t| {
            #[allow(clippy::redundant_locals)] // captures the Send wrapper whole, not its raw pointer field
            let to = to;
            // SAFETY: row `t` of `to` (total × h) is this task's alone.
            let row = unsafe { std::slice::from_raw_parts_mut(to.0.add(t * h), h) };
            row.copy_from_slice(&from[t * h..(t + 1) * h]);
            if !gamma.is_empty() {
                kernels.layer_norm(row, gamma, beta, eps);
            }
        })
    };
    for (l, layer) in params.layers.iter().enumerate() {
        normed(x, ctx, &layer.ln1)?;
        let qkv = &mut big[..total * 3 * h];
        dense(executor, kernels, ctx, total, &layer.qkv, qkv, Epilogue::Plain)?;
        let theta = if modern.global[l] { modern.theta_global } else { modern.theta_local };
        rotary(executor, config, qkv, spans, theta)?;
        let mask = if modern.global[l] { Mask::All } else { Mask::Window(modern.window) };
        attention(executor, kernels, (h, config.heads), None, qkv, ctx, spans, attn, per_thread, slots, mask)?;
        dense(executor, kernels, ctx, total, &layer.out, x, Epilogue::Accumulate)?;
        normed(x, ctx, &layer.ln2)?;
        let up = &mut big[..total * wide];
        dense(executor, kernels, ctx, total, &layer.up, up, Epilogue::Plain)?;
        let rows = Shared(up.as_mut_ptr());
        executor.for_n_dynamic(total, |t| {
            #[allow(clippy::redundant_locals)] // captures the Send wrapper whole, not its raw pointer field
            let rows = rows;
            // SAFETY: row `t` of `up` (total × wide) is this task's alone.
            let row = unsafe { std::slice::from_raw_parts_mut(rows.0.add(t * wide), wide) };
            let (input, gate) = row.split_at_mut(wide / 2);
            kernels.bias_gelu(input, &zeros);
            input.iter_mut().zip(gate.iter()).for_each(|(v, g)| *v *= *g);
        })?;
        dense_strided(executor, kernels, up, wide, total, &layer.down, x, Epilogue::Accumulate)?;
    }
    if let Some(norm) = &params.final_norm {
        normed(x, ctx, norm)?;
        x.copy_from_slice(ctx);
    }
    Ok(())
}

/// Rotary positions on every token's queries and keys (the first two thirds of its `qkv` row), by its position in
/// its text, as transformers' ModernBERT computes them in f32: pairs `(i, i + d/2)` of each head turned by
/// `position / base^(2i/d)`.
fn rotary(executor: &Executor, config: &Config, qkv: &mut [f32], spans: &[Range<usize>], base: f64) -> Result<()> {
    let (h, heads, dh) = (config.hidden, config.heads, config.head_dim());
    let half = dh / 2;
    let inverse: Vec<f32> = (0..half).map(|i| 1.0 / (base as f32).powf((2 * i) as f32 / dh as f32)).collect();
    let rows = Shared(qkv.as_mut_ptr());
    executor.for_n_dynamic(spans.len(), |text| {
        #[allow(clippy::redundant_locals)] // captures the Send wrapper whole, not its raw pointer field
        let rows = rows;
        // One position's angles serve all its heads' queries and keys: computed once a token, not once a head.
        let (mut sin, mut cos) = (vec![0.0f32; half], vec![0.0f32; half]);
        for (p, t) in spans[text].clone().enumerate() {
            for (i, inv) in inverse.iter().enumerate() {
                (sin[i], cos[i]) = (p as f32 * inv).sin_cos();
            }
            // SAFETY: token `t`'s row of 3h belongs to this text's span alone; its first 2h are Q and K.
            let row = unsafe { std::slice::from_raw_parts_mut(rows.0.add(t * 3 * h), 2 * h) };
            for v in row.chunks_exact_mut(dh).take(2 * heads) {
                let (first, second) = v.split_at_mut(half);
                for i in 0..half {
                    let (a, b) = (first[i], second[i]);
                    first[i] = a * cos[i] - b * sin[i];
                    second[i] = b * cos[i] + a * sin[i];
                }
            }
        }
    })
}

/// MPNet's bucket of a relative position `d` (key index less query index) among `buckets`, as transformers'
/// `relative_position_bucket` computes it (max distance 128, the logarithm in f32 and truncated).
pub fn relative_bucket(d: i64, buckets: usize) -> usize {
    let half = (buckets / 2) as i64;
    let n = -d;
    let sign = if n < 0 { half } else { 0 };
    let n = n.abs();
    let exact = half / 2;
    let bucket = if n < exact {
        n
    } else {
        let log = (n as f32 / exact as f32).ln() / (128.0f64 / exact as f64).ln() as f32;
        (exact + (log * (half - exact) as f32) as i64).min(half - 1)
    };
    (sign + bucket) as usize
}

/// The keys a query attends to, besides those of its own text alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mask {
    /// Every key of the text.
    All,
    /// Keys at most this many positions away (ModernBERT's local layers).
    Window(usize),
    /// Keys at or before the query's position (CLIP's text tower).
    Causal,
}

/// Self-attention of every (text, head) pair: `softmax(Q·Kᵀ/√d + bias)·V` into `ctx`, over the keys `mask` lets
/// each query see (the bias: `relative`, MPNet's relative position bias `[buckets × heads]` and its bucket count,
/// else none), claimed dynamically by the first `slots` threads, each with its own part of `scratch` for the scores
/// and the packed keys and values. `qkv` holds each token's queries, keys and values, `3 × hidden` a row; `ctx`
/// each token's context, `hidden` a row; `(hidden, heads)` is `shape`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention(
    executor: &Executor,
    kernels: &Kernels,
    (h, heads): (usize, usize),
    relative: Option<(&[f32], usize)>,
    qkv: &[f32],
    ctx: &mut [f32],
    spans: &[Range<usize>],
    scratch: &mut [f32],
    per_thread: usize,
    slots: usize,
    mask: Mask,
) -> Result<()> {
    let dh = h / heads;
    let ld = 3 * h;
    let scale = 1.0 / (dh as f32).sqrt();
    let tasks = spans.len() * heads;
    let next = AtomicUsize::new(0);
    let (out, space) = (Shared(ctx.as_mut_ptr()), Shared(scratch.as_mut_ptr()));
    executor.for_threads(|thread| {
        let (out, space) = (out, space);
        if thread >= slots {
            return; // the scratch holds `slots` threads' worth
        }
        // SAFETY: each thread index below `slots` owns its `per_thread` floats of scratch.
        let mine = unsafe { std::slice::from_raw_parts_mut(space.0.add(thread * per_thread), per_thread) };
        // A head's relative bias by distance, `len - 1 + d` for `d` in `-(len-1)..len` (MPNet only).
        let mut by_distance = Vec::new();
        loop {
            let task = next.fetch_add(1, Ordering::Relaxed);
            if task >= tasks {
                break;
            }
            let (span, head) = (spans[task / heads].clone(), task % heads);
            let len = span.len();
            let (scores, rest) = mine.split_at_mut(len.min(QUERY_BLOCK) * len);
            let (keys, rest) = rest.split_at_mut(packed_len(len, dh));
            let values = &mut rest[..packed_len(dh, len)];
            gemm::pack_rows(&qkv[span.start * ld + h + head * dh..], ld, len, dh, keys);
            gemm::pack_columns(&qkv[span.start * ld + 2 * h + head * dh..], ld, len, dh, values);
            if relative.is_some() || mask != Mask::All {
                // Key j of query i is at distance j - i: entry len - 1 - i + j of `by_distance`, the head's
                // relative bias (MPNet), or 0 (ModernBERT's sliding window, which the rows below apply).
                by_distance.clear();
                by_distance.extend((0..2 * len - 1).map(|e| {
                    let d = e as i64 - (len as i64 - 1);
                    match relative {
                        Some((bias, buckets)) => bias[relative_bucket(d, buckets) * heads + head],
                        None => 0.0,
                    }
                }));
            }
            for first in (0..len).step_by(QUERY_BLOCK) {
                let rows = QUERY_BLOCK.min(len - first);
                let block = &mut scores[..rows * len];
                let q = &qkv[(span.start + first) * ld + head * dh..];
                // SAFETY: the block's `rows` query rows are rows of `dh` at stride `ld` inside `qkv` (row
                // `span.start + first` onwards, inside the span); `block` holds `rows × len` scores; the context of
                // this head is columns `head·dh..` of the block's rows, which only this task writes.
                unsafe {
                    gemm::serial(
                        kernels,
                        Lhs::rows(q.as_ptr(), ld),
                        rows,
                        keys,
                        len,
                        dh,
                        block.as_mut_ptr(),
                        len,
                        false,
                    );
                    if by_distance.is_empty() {
                        for row in block.chunks_exact_mut(len) {
                            kernels.softmax(row, scale);
                        }
                    } else {
                        for (r, row) in block.chunks_exact_mut(len).enumerate() {
                            // Keys outside a sliding window (or after a causal query) weigh 0: the softmax runs over
                            // the keys it sees alone.
                            let i = first + r;
                            let (lo, hi) = match mask {
                                Mask::All => (0, len),
                                Mask::Window(w) => (i.saturating_sub(w), (i + w + 1).min(len)),
                                Mask::Causal => (0, i + 1),
                            };
                            let bias = &by_distance[len - 1 - i..];
                            for (v, b) in row[lo..hi].iter_mut().zip(&bias[lo..hi]) {
                                *v = *v * scale + b;
                            }
                            row[..lo].fill(0.0);
                            row[hi..].fill(0.0);
                            kernels.softmax(&mut row[lo..hi], 1.0);
                        }
                    }
                    let c = out.0.add((span.start + first) * h + head * dh);
                    gemm::serial(kernels, Lhs::rows(block.as_ptr(), len), rows, values, dh, len, c, h, false);
                }
            }
            by_distance.clear();
        }
    })
}

#[cfg(test)]
mod tests {
    /// ModernBERT-base's shape (768 hidden, 12 heads) at its 8,192 positions: a thread's attention scratch is a
    /// block of scores and the packed keys and values (about 6 MiB), not the 256 MiB of a full score matrix.
    #[test]
    fn attention_scratch_grows_linearly_with_the_length() {
        let config = crate::families::Config::bert(768, 12, 22, 1152, 50368, 8192);
        let dh = config.head_dim();
        let (long, short) = (super::attention_floats(dh, 8192), super::attention_floats(dh, 4096));
        assert!(long * 4 < 8 << 20, "{long} floats");
        assert!(long <= 2 * short + 64, "{long} floats at 8192 tokens, {short} at 4096: not linear");
        assert!(long >= 8192 * super::QUERY_BLOCK, "{long} floats hold no block of scores");
    }

    /// Attention under each mask against a plain loop in f64: two texts (one past a query block), two heads.
    #[test]
    fn attention_masks_match_a_plain_loop() {
        use super::{attention, attention_floats, Mask};
        let executor =
            crate::executor::Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() })
                .unwrap();
        let kernels = crate::kernels::Kernels::for_class(None).unwrap();
        let (h, heads, dh) = (8, 2, 4);
        let spans = [0..5, 5..45];
        let total = 45;
        let qkv: Vec<f32> = (0..total * 3 * h).map(|i| ((i * 7919 % 113) as f32 / 113.0 - 0.5) * 2.0).collect();
        for mask in [Mask::All, Mask::Causal, Mask::Window(3)] {
            let per_thread = attention_floats(dh, 40);
            let mut scratch = vec![0.0; 2 * per_thread];
            let mut ctx = vec![f32::NAN; total * h];
            attention(&executor, &kernels, (h, heads), None, &qkv, &mut ctx, &spans, &mut scratch, per_thread, 2, mask)
                .unwrap();
            for span in &spans {
                for head in 0..heads {
                    for i in span.clone() {
                        let sees = |j: usize| match mask {
                            Mask::All => true,
                            Mask::Causal => j <= i,
                            Mask::Window(w) => j.abs_diff(i) <= w,
                        };
                        let at = |t: usize, part: usize, d: usize| qkv[t * 3 * h + part * h + head * dh + d] as f64;
                        let scores: Vec<(usize, f64)> = span
                            .clone()
                            .filter(|j| sees(*j))
                            .map(|j| (j, (0..dh).map(|d| at(i, 0, d) * at(j, 1, d)).sum::<f64>() / (dh as f64).sqrt()))
                            .collect();
                        let max = scores.iter().map(|s| s.1).fold(f64::MIN, f64::max);
                        let total: f64 = scores.iter().map(|s| (s.1 - max).exp()).sum();
                        for d in 0..dh {
                            let want: f64 = scores.iter().map(|(j, s)| (s - max).exp() / total * at(*j, 2, d)).sum();
                            let got = ctx[i * h + head * dh + d] as f64;
                            assert!((got - want).abs() < 1e-5, "{mask:?} token {i} head {head} [{d}]: {got} vs {want}");
                        }
                    }
                }
            }
        }
    }

    /// transformers' buckets for distances -200..=200, recorded by tests/fixtures/families/make_families.py.
    #[test]
    fn mpnet_relative_buckets_are_transformers_buckets() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/families/reference.json");
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let table = &json["mpnet"]["relative_buckets"];
        let (distances, buckets) = (table["distances"].as_array().unwrap(), table["buckets"].as_array().unwrap());
        assert_eq!((distances.len(), buckets.len()), (401, 401));
        for (d, want) in distances.iter().zip(buckets) {
            let (d, want) = (d.as_i64().unwrap(), want.as_u64().unwrap() as usize);
            assert_eq!(super::relative_bucket(d, 32), want, "distance {d}");
        }
    }
}
