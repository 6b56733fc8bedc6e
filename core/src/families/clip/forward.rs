//! The forward passes of CLIP's and SigLIP's towers over a batch, written with the kernels, attention included:
//! every sequence's tokens side by side in one `[tokens × hidden]` matrix for the dense layers, attention per
//! (sequence, head).
//!
//! A batch's scratch is carved from the executor's arena: per token, the hidden state, the wider of the fused QKV
//! and the MLP's activations, and the normed rows (then attention's context); per attention slot, a block of scores
//! and the packed keys and values of one sequence ([`attention_floats`]); per image, its patches' pixels and the
//! pooling's rows.

use super::params::{Layer, Pool, Text, TextConfig, TowerConfig, Variant, Vision, VisionConfig};
use crate::error::Result;
use crate::executor::Executor;
use crate::kernels::attention::{attention, attention_floats, Mask};
use crate::kernels::gemm::{dense, dense_norm_into, Epilogue, Norm, Shared};
use crate::kernels::Kernels;
use std::ops::Range;

/// `to[t] = LayerNorm(from[t])` for each of the `rows` rows of `h`.
#[allow(clippy::too_many_arguments)]
fn normed(
    executor: &Executor,
    kernels: &Kernels,
    from: &[f32],
    to: &mut [f32],
    rows: usize,
    h: usize,
    (gamma, beta): &(Vec<f32>, Vec<f32>),
    eps: f32,
) -> Result<()> {
    assert!(from.len() >= rows * h && to.len() >= rows * h, "normed: buffers under {rows} rows");
    let out = Shared(to.as_mut_ptr());
    executor.for_n_dynamic(rows, |t| {
        // SAFETY: row `t` of `to` (at least rows × h, asserted above) is this task's alone.
        let row = unsafe { out.slice(t * h, h) };
        row.copy_from_slice(&from[t * h..(t + 1) * h]);
        kernels.layer_norm(row, gamma, beta, eps);
    })
}

/// Floats of scratch a tower's layers take: `[x, big, ctx, norm]` per token, then the attention slots'.
pub fn layer_lens(config: &TowerConfig, total: usize, longest: usize, slots: usize) -> [usize; 5] {
    let h = config.hidden;
    [total * h, total * config.wide(), total * h, total * h, slots * attention_floats(config.head_dim(), longest)]
}

/// The pre-norm layers over `x` (`spans` its sequences): per layer `x += out(attention(qkv(norm1(x))))`, then
/// `x += down(act(up(norm2(x))))`. Each residual is added by its projection's own tiles, which also write the
/// LayerNorm that comes next into `norm` (the next layer's `norm1`, and after the last layer `after`'s, if any):
/// five dispatches a layer. `norm` holds `after(x)` on return.
#[allow(clippy::too_many_arguments)]
fn layers(
    executor: &Executor,
    kernels: &Kernels,
    config: &TowerConfig,
    layers: &[Layer],
    after: Option<&(Vec<f32>, Vec<f32>)>,
    spans: &[Range<usize>],
    mask: Mask,
    [x, big, ctx, norm, attn]: [&mut [f32]; 5],
    slots: usize,
) -> Result<()> {
    let (h, eps) = (config.hidden, config.eps);
    let total = spans.last().map_or(0, |s| s.end);
    let longest = spans.iter().map(|s| s.len()).max().unwrap_or(0);
    let per_thread = attention_floats(config.head_dim(), longest);
    let (x, norm) = (&mut x[..total * h], &mut norm[..total * h]);
    match layers.first().map(|l| &l.norm1).or(after) {
        Some(first) => normed(executor, kernels, x, norm, total, h, first, eps)?,
        None => return Ok(()),
    }
    for (i, layer) in layers.iter().enumerate() {
        let qkv = &mut big[..total * 3 * h];
        dense(executor, kernels, norm, total, &layer.qkv, qkv, Epilogue::Bias(&layer.qkv_bias))?;
        attention(executor, kernels, (h, config.heads), None, qkv, ctx, spans, attn, per_thread, slots, mask)?;
        let norm2 = Norm { gamma: &layer.norm2.0, beta: &layer.norm2.1, eps };
        dense_norm_into(executor, kernels, (ctx, total), &layer.out, x, &layer.out_bias, norm2, norm)?;
        let up = &mut big[..total * config.intermediate];
        let act = Epilogue::BiasActivation(&layer.up_bias, config.activation);
        dense(executor, kernels, norm, total, &layer.up, up, act)?;
        match layers.get(i + 1).map(|next| &next.norm1).or(after) {
            Some((gamma, beta)) => {
                let next = Norm { gamma, beta, eps };
                dense_norm_into(executor, kernels, (up, total), &layer.down, x, &layer.down_bias, next, norm)?
            }
            None => dense(executor, kernels, up, total, &layer.down, x, Epilogue::AccumulateBias(&layer.down_bias))?,
        }
    }
    Ok(())
}

/// Tokens per image: one a patch, and CLIP's class token.
pub fn image_tokens(variant: Variant, config: &VisionConfig) -> usize {
    config.side() * config.side() + usize::from(variant == Variant::Clip)
}

/// Floats of scratch a batch of `n` images takes with `slots` attention slots:
/// `[patches, x, big, ctx, norm, attn, pool]`.
pub fn image_lens(variant: Variant, config: &VisionConfig, n: usize, slots: usize) -> [usize; 7] {
    let tokens = image_tokens(variant, config);
    let patches = config.side() * config.side();
    let pixels = 3 * config.patch_size * config.patch_size;
    let [x, big, ctx, norm, attn] = layer_lens(&config.tower, n * tokens, tokens, slots);
    let t = &config.tower;
    [n * patches * pixels, x, big, ctx, norm, attn, n * (2 * t.hidden + t.intermediate.max(t.hidden))]
}

/// Embeds `n` images (`pixels`: each `3 × side × side`, channel-major, normalised) into `out`'s `n` rows of
/// `dimensions`.
#[allow(clippy::too_many_arguments)]
pub fn images(
    executor: &Executor,
    kernels: &Kernels,
    variant: Variant,
    config: &VisionConfig,
    weights: &Vision,
    dimensions: usize,
    pixels: &[f32],
    n: usize,
    out: &mut [f32],
    scratch: &mut crate::executor::Scratch,
) -> Result<()> {
    let (side, p, h) = (config.image_size, config.patch_size, config.tower.hidden);
    let (grid, pixels_per_patch, eps) = (config.side(), 3 * p * p, config.tower.eps);
    let (patches, tokens) = (grid * grid, image_tokens(variant, config));
    assert!(pixels.len() >= n * 3 * side * side && out.len() >= n * dimensions, "images: buffers under {n} images");
    let slots = executor.threads();
    let [cols, x, big, ctx, norm, attn, pool] = scratch.carve(image_lens(variant, config, n, slots));

    // Each patch's pixels as one row (channel, row, column: the convolution's weight order), then one product.
    let rows = Shared(cols.as_mut_ptr());
    executor.for_n_dynamic(n * patches, |r| {
        let (image, patch) = (r / patches, r % patches);
        let (y0, x0) = ((patch / grid) * p, (patch % grid) * p);
        // SAFETY: row `r` of `cols` (n·patches rows of `pixels_per_patch`, carved above) is this task's alone.
        let row = unsafe { rows.slice(r * pixels_per_patch, pixels_per_patch) };
        for c in 0..3 {
            let plane = &pixels[(image * 3 + c) * side * side..];
            for dy in 0..p {
                let src = &plane[(y0 + dy) * side + x0..][..p];
                row[(c * p + dy) * p..][..p].copy_from_slice(src);
            }
        }
    })?;
    let embedded = &mut big[..n * patches * h];
    dense(executor, kernels, cols, n * patches, &weights.patch, embedded, Epilogue::Bias(&weights.patch_bias))?;

    // Tokens: [class,] patches, plus their positions; CLIP's norm before the layers.
    let first = usize::from(variant == Variant::Clip);
    let rows = Shared(x.as_mut_ptr());
    let embedded = &*embedded;
    executor.for_n_dynamic(n * tokens, |r| {
        let (image, token) = (r / tokens, r % tokens);
        // SAFETY: row `r` of `x` (n·tokens rows of `h`) is this task's alone.
        let row = unsafe { rows.slice(r * h, h) };
        match (&weights.class, token.checked_sub(first)) {
            (Some(class), None) => row.copy_from_slice(class),
            (_, patch) => {
                let patch = image * patches + patch.unwrap_or(0);
                row.copy_from_slice(&embedded[patch * h..(patch + 1) * h]);
            }
        }
        kernels.add(row, &weights.positions[token * h..(token + 1) * h]);
        if let Some((gamma, beta)) = &weights.pre_norm {
            kernels.layer_norm(row, gamma, beta, eps);
        }
    })?;

    let spans: Vec<Range<usize>> = (0..n).map(|i| i * tokens..(i + 1) * tokens).collect();
    // SigLIP's head reads every token after the post-norm, which the last layer's tiles write into `norm`.
    let after = matches!(weights.pool, Pool::Head(_)).then_some(&weights.post_norm);
    let buffers = [&mut *x, &mut *big, &mut *ctx, &mut *norm, &mut *attn];
    layers(executor, kernels, &config.tower, &weights.layers, after, &spans, Mask::All, buffers, slots)?;

    match &weights.pool {
        Pool::Class { projection } => {
            // The class tokens' rows, normed, then projected straight into `out`.
            let pooled = &mut pool[..n * h];
            for i in 0..n {
                let row = &mut pooled[i * h..(i + 1) * h];
                row.copy_from_slice(&x[i * tokens * h..][..h]);
                kernels.layer_norm(row, &weights.post_norm.0, &weights.post_norm.1, eps);
            }
            dense(executor, kernels, pooled, n, projection, &mut out[..n * dimensions], Epilogue::Plain)
        }
        Pool::Head(head) => {
            let total = n * tokens;
            let kv = &mut big[..total * 2 * h];
            dense(executor, kernels, norm, total, &head.kv, kv, Epilogue::Bias(&head.kv_bias))?;
            let (attended, rest) = pool.split_at_mut(n * h);
            let (normed_rows, wide) = rest.split_at_mut(n * h);
            // The probe's one query against each image's keys, per head: a softmax over the image's tokens.
            let heads = config.tower.heads;
            let dh = h / heads;
            let scale = 1.0 / (dh as f32).sqrt();
            let rows = Shared(attended.as_mut_ptr());
            let kv = &*kv;
            executor.for_n_dynamic(n * heads, |task| {
                let (image, head_index) = (task / heads, task % heads);
                let q = &head.query[head_index * dh..(head_index + 1) * dh];
                let mut scores: Vec<f32> = (0..tokens)
                    .map(|t| {
                        let k = &kv[(image * tokens + t) * 2 * h + head_index * dh..][..dh];
                        q.iter().zip(k).map(|(a, b)| a * b).sum()
                    })
                    .collect();
                kernels.softmax(&mut scores, scale);
                // SAFETY: columns `head_index·dh..` of row `image` of `attended` (n × h) are this task's alone.
                let ctx = unsafe { rows.slice(image * h + head_index * dh, dh) };
                ctx.fill(0.0);
                for (t, weight) in scores.iter().enumerate() {
                    let v = &kv[(image * tokens + t) * 2 * h + h + head_index * dh..][..dh];
                    ctx.iter_mut().zip(v).for_each(|(c, v)| *c += weight * v);
                }
            })?;
            let out = &mut out[..n * dimensions];
            dense(executor, kernels, attended, n, &head.out, out, Epilogue::Bias(&head.out_bias))?;
            normed(executor, kernels, out, normed_rows, n, h, &head.norm, eps)?;
            let up = &mut wide[..n * config.tower.intermediate];
            let act = Epilogue::BiasActivation(&head.up_bias, config.tower.activation);
            dense(executor, kernels, normed_rows, n, &head.up, up, act)?;
            dense(executor, kernels, up, n, &head.down, out, Epilogue::AccumulateBias(&head.down_bias))
        }
    }
}

/// Floats of scratch a batch of texts of `total` tokens, the longest `longest`, takes:
/// `[x, big, ctx, norm, attn, pool]`.
pub fn text_lens(config: &TextConfig, texts: usize, total: usize, longest: usize, slots: usize) -> [usize; 6] {
    let [x, big, ctx, norm, attn] = layer_lens(&config.tower, total, longest, slots);
    [x, big, ctx, norm, attn, texts * config.tower.hidden]
}

/// The position CLIP's text tower pools: the first `eos` (for the legacy id 2, the largest id, as transformers
/// does); SigLIP's is the last.
pub fn pooled_position(variant: Variant, ids: &[u32], eos: u32) -> usize {
    let last = ids.len().saturating_sub(1);
    match variant {
        Variant::Siglip => last,
        Variant::Clip if eos == 2 => {
            // torch's argmax gives the first of equal maxima.
            let max = ids.iter().copied().max().unwrap_or(0);
            ids.iter().position(|id| *id == max).unwrap_or(last)
        }
        Variant::Clip => ids.iter().position(|id| *id == eos).unwrap_or(last),
    }
}

/// Embeds tokenised texts (each at most the tower's positions, ids below its vocabulary) into `out`'s rows of
/// `dimensions`.
#[allow(clippy::too_many_arguments)]
pub fn texts(
    executor: &Executor,
    kernels: &Kernels,
    variant: Variant,
    config: &TextConfig,
    weights: &Text,
    dimensions: usize,
    ids: &[Vec<u32>],
    out: &mut [f32],
    scratch: &mut crate::executor::Scratch,
) -> Result<()> {
    let (h, eps) = (config.tower.hidden, config.tower.eps);
    let mut spans = Vec::with_capacity(ids.len());
    let mut total = 0;
    for t in ids {
        spans.push(total..total + t.len());
        total += t.len();
    }
    let longest = ids.iter().map(Vec::len).max().unwrap_or(0);
    let slots = executor.threads();
    let [x, big, ctx, norm, attn, pool] = scratch.carve(text_lens(config, ids.len(), total, longest, slots));
    let rows = Shared(x.as_mut_ptr());
    executor.for_n_dynamic(ids.len(), |text| {
        for (p, t) in spans[text].clone().enumerate() {
            // SAFETY: row `t` belongs to this text's span alone.
            let row = unsafe { rows.slice(t * h, h) };
            let id = ids[text][p] as usize;
            row.copy_from_slice(&weights.tokens[id * h..(id + 1) * h]);
            kernels.add(row, &weights.positions[p * h..(p + 1) * h]);
        }
    })?;
    let mask = if variant == Variant::Clip { Mask::Causal } else { Mask::All };
    let buffers = [&mut *x, &mut *big, &mut *ctx, &mut *norm, &mut *attn];
    layers(executor, kernels, &config.tower, &weights.layers, None, &spans, mask, buffers, slots)?;
    for (i, span) in spans.iter().enumerate() {
        let t = span.start + pooled_position(variant, &ids[i], config.eos);
        let row = &mut pool[i * h..(i + 1) * h];
        row.copy_from_slice(&x[t * h..(t + 1) * h]);
        kernels.layer_norm(row, &weights.final_norm.0, &weights.final_norm.1, eps);
    }
    let out = &mut out[..ids.len() * dimensions];
    dense(executor, kernels, pool, ids.len(), &weights.projection, out, Epilogue::Bias(&weights.projection_bias))
}
