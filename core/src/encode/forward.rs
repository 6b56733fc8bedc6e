//! The BERT forward pass over a batch: every text's tokens side by side in one `[tokens × hidden]` matrix for the
//! dense layers (no padding), attention per (text, head), then pooling and normalisation.

use super::config::{Config, Pooling};
use super::gemm::{self, dense, packed_len, Epilogue, Shared};
use super::kernels::Kernels;
use super::params::Params;
use super::tokenize::Tokens;
use crate::error::{Error, Result};
use crate::executor::{Executor, Scratch};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs the encoder over `tokens` and writes one pooled (and, when asked, normalised) row per text into `pooled`.
#[allow(clippy::too_many_arguments)]
pub fn forward(
    executor: &Executor,
    kernels: &Kernels,
    config: &Config,
    params: &Params,
    tokens: &[Tokens],
    normalize: bool,
    pooled: &mut [f32],
    scratch: &mut Scratch,
) -> Result<()> {
    let (h, dh) = (config.hidden, config.head_dim());
    let mut spans: Vec<Range<usize>> = Vec::with_capacity(tokens.len());
    let mut total = 0;
    for t in tokens {
        spans.push(total..total + t.ids.len());
        total += t.ids.len();
    }
    let longest = tokens.iter().map(|t| t.ids.len()).max().unwrap_or(0);
    for (i, t) in tokens.iter().enumerate() {
        if let Some(id) = t.ids.iter().find(|id| **id as usize >= config.vocab) {
            return Err(Error::unsupported(format!(
                "the tokenizer gave `texts[{i}]` token {id}, past the {} word embeddings",
                config.vocab
            )));
        }
        if let Some(ty) = t.type_ids.iter().find(|ty| **ty as usize >= config.type_vocab) {
            return Err(Error::unsupported(format!("the tokenizer gave `texts[{i}]` token type {ty}")));
        }
    }
    let per_thread = longest * longest + packed_len(longest, dh) + packed_len(dh, longest);
    let wide = (3 * h).max(config.intermediate);
    let [x, big, ctx, attn] = scratch.carve([total * h, total * wide, total * h, executor.threads() * per_thread]);

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

    let layer_norm = |x: &mut [f32], (gamma, beta): &(Vec<f32>, Vec<f32>)| {
        let rows = Shared(x.as_mut_ptr());
        executor.for_slices(total, |range| {
            #[allow(clippy::redundant_locals)] // captures the Send wrapper whole, not its raw pointer field
            let rows = rows;
            for t in range {
                // SAFETY: each slice normalises its own rows.
                let row = unsafe { std::slice::from_raw_parts_mut(rows.0.add(t * h), h) };
                kernels.layer_norm(row, gamma, beta, config.layer_norm_eps);
            }
        })
    };
    for layer in &params.layers {
        let qkv = &mut big[..total * 3 * h];
        dense(executor, kernels, x, total, &layer.qkv, qkv, Epilogue::Bias(&layer.qkv_bias))?;
        attention(executor, kernels, config, qkv, ctx, &spans, attn, per_thread)?;
        dense(executor, kernels, ctx, total, &layer.out, x, Epilogue::AddBias(&layer.out_bias))?;
        layer_norm(x, &layer.ln1)?;
        let up = &mut big[..total * config.intermediate];
        dense(executor, kernels, x, total, &layer.up, up, Epilogue::BiasGelu(&layer.up_bias))?;
        dense(executor, kernels, up, total, &layer.down, x, Epilogue::AddBias(&layer.down_bias))?;
        layer_norm(x, &layer.ln2)?;
    }

    let out = Shared(pooled.as_mut_ptr());
    let x = &*x;
    executor.for_n(tokens.len(), |text| {
        #[allow(clippy::redundant_locals)] // captures the Send wrapper whole, not its raw pointer field
        let out = out;
        // SAFETY: row `text` of the output is this task's alone.
        let row = unsafe { std::slice::from_raw_parts_mut(out.0.add(text * h), h) };
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

/// Self-attention of every (text, head) pair: `softmax(Q·Kᵀ/√d)·V` into `ctx`, claimed dynamically by the threads,
/// each with its own part of `scratch` for the scores and the packed keys and values.
#[allow(clippy::too_many_arguments)]
fn attention(
    executor: &Executor,
    kernels: &Kernels,
    config: &Config,
    qkv: &[f32],
    ctx: &mut [f32],
    spans: &[Range<usize>],
    scratch: &mut [f32],
    per_thread: usize,
) -> Result<()> {
    let (h, heads, dh) = (config.hidden, config.heads, config.head_dim());
    let ld = 3 * h;
    let scale = 1.0 / (dh as f32).sqrt();
    let tasks = spans.len() * heads;
    let next = AtomicUsize::new(0);
    let (out, space) = (Shared(ctx.as_mut_ptr()), Shared(scratch.as_mut_ptr()));
    executor.for_threads(|thread| {
        let (out, space) = (out, space);
        // SAFETY: each thread index owns its `per_thread` floats of scratch.
        let mine = unsafe { std::slice::from_raw_parts_mut(space.0.add(thread * per_thread), per_thread) };
        loop {
            let task = next.fetch_add(1, Ordering::Relaxed);
            if task >= tasks {
                break;
            }
            let (span, head) = (spans[task / heads].clone(), task % heads);
            let len = span.len();
            let (scores, rest) = mine.split_at_mut(len * len);
            let (keys, rest) = rest.split_at_mut(packed_len(len, dh));
            let values = &mut rest[..packed_len(dh, len)];
            let q = &qkv[span.start * ld + head * dh..];
            gemm::pack_rows(&qkv[span.start * ld + h + head * dh..], ld, len, dh, keys);
            gemm::pack_columns(&qkv[span.start * ld + 2 * h + head * dh..], ld, len, dh, values);
            // SAFETY: Q's rows are `len` rows of `dh` at stride `ld` inside `qkv`; the scores are `len × len`; the
            // context of this head is columns `head·dh..` of the span's rows, which only this task writes.
            unsafe {
                gemm::serial(kernels, q.as_ptr(), ld, len, keys, len, dh, scores.as_mut_ptr(), len, false);
                for row in scores.chunks_exact_mut(len) {
                    kernels.softmax(row, scale);
                }
                let c = out.0.add(span.start * h + head * dh);
                gemm::serial(kernels, scores.as_ptr(), len, len, values, dh, len, c, h, false);
            }
        }
    })
}
