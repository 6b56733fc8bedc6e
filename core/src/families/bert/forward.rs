//! The BERT forward pass over a batch: every text's tokens side by side in one `[tokens × hidden]` matrix for the
//! dense layers (no padding), attention per (text, head), up to the last layer's token vectors (the verbs pool
//! them).
//!
//! A batch's scratch is [`scratch_lens`]: per token, the hidden state, the wider of the fused QKV and the
//! intermediate activations, and the attention context; per attention slot (a thread doing attention), a block of
//! rows of scores ([`attention_floats`]) and the packed keys and values of the batch's longest text: linear in its length. `super::batch` sizes batches with it.

use super::params::Params;
use super::Config;
use crate::error::{Error, Result};
use crate::executor::{Executor, Scratch};
use crate::families::tokenize::Tokens;
use crate::kernels::attention::{attention, attention_floats, Mask};
use crate::kernels::gemm::{dense, dense_strided, Epilogue, Shared, Stride};
use crate::kernels::Kernels;
use std::ops::Range;

/// The floats of each scratch buffer a batch of `total` tokens takes whose longest text has `longest` tokens, with
/// `slots` threads doing attention.
pub fn scratch_lens(config: &Config, total: usize, longest: usize, slots: usize) -> [usize; 4] {
    let (h, wide) = (config.hidden, (3 * config.hidden).max(config.intermediate));
    let at = |n: usize, m: usize| n.saturating_mul(m);
    [at(total, h), at(total, wide), at(total, h), at(slots, attention_floats(config.head_dim(), longest))]
}

/// Runs the encoder over `tokens` (each checked against the vocabulary by the tokenizer that made it) and returns the
/// last layer's token vectors, `[tokens × hidden]` in `scratch`, and each text's span of rows. `slots` threads (at
/// least 1) do attention, each with its own part of the scratch.
pub fn forward<'s>(
    executor: &Executor,
    kernels: &Kernels,
    config: &Config,
    params: &Params,
    tokens: &[Tokens],
    slots: usize,
    scratch: &'s mut Scratch,
) -> Result<(&'s [f32], Vec<Range<usize>>)> {
    let h = config.hidden;
    let mut spans: Vec<Range<usize>> = Vec::with_capacity(tokens.len());
    let mut total = 0;
    for t in tokens {
        spans.push(total..total + t.ids.len());
        total += t.ids.len();
    }
    let longest = tokens.iter().map(|t| t.ids.len()).max().unwrap_or(0);
    if tokens.iter().any(|t| t.ids.is_empty() || t.ids.len() != t.type_ids.len()) {
        return Err(Error::internal("a text reached the encoder with no tokens"));
    }
    let slots = slots.clamp(1, executor.threads());
    let per_thread = attention_floats(config.head_dim(), longest);
    let [x, big, ctx, attn] = scratch.carve(scratch_lens(config, total, longest, slots));

    // Embeddings: word + position + token type, then LayerNorm.
    let rows = Shared(x.as_mut_ptr());
    executor.for_n_dynamic(tokens.len(), |text| {
        for (p, t) in spans[text].clone().enumerate() {
            // SAFETY: row `t` belongs to this text's span alone.
            let row = unsafe { rows.slice(t * h, h) };
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

    let x: &'s [f32] = x;
    Ok((&x[..total * h], spans))
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
    modern: &super::Modern,
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
            // SAFETY: row `t` of `to` (total × h) is this task's alone.
            let row = unsafe { to.slice(t * h, h) };
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
            // SAFETY: row `t` of `up` (total × wide) is this task's alone.
            let row = unsafe { rows.slice(t * wide, wide) };
            let (input, gate) = row.split_at_mut(wide / 2);
            kernels.bias_gelu(input, &zeros);
            input.iter_mut().zip(gate.iter()).for_each(|(v, g)| *v *= *g);
        })?;
        dense_strided(executor, kernels, up, Stride::Rows(wide), total, &layer.down, x, Epilogue::Accumulate)?;
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
        // One position's angles serve all its heads' queries and keys: computed once a token, not once a head.
        let (mut sin, mut cos) = (vec![0.0f32; half], vec![0.0f32; half]);
        for (p, t) in spans[text].clone().enumerate() {
            for (i, inv) in inverse.iter().enumerate() {
                (sin[i], cos[i]) = (p as f32 * inv).sin_cos();
            }
            // SAFETY: token `t`'s row of 3h belongs to this text's span alone; its first 2h are Q and K.
            let row = unsafe { rows.slice(t * 3 * h, 2 * h) };
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
